#include "loop/paired_epilogue.h"

#include <algorithm>

#include "ir/element_def.h"
#include "loop/epilogue_group.h"

namespace axon::loop {

using namespace axon::ir;

namespace {

bool same_a_and_layout(const Contraction& x, const Contraction& y) {
  return x.batch == y.batch && x.M == y.M && x.N == y.N && x.K == y.K && x.a_base == y.a_base &&
         x.a_batch == y.a_batch && x.a_m == y.a_m && x.a_k == y.a_k && x.b_batch == y.b_batch && x.b_k == y.b_k &&
         x.b_n == y.b_n && x.c_batch == y.c_batch && x.c_m == y.c_m && x.c_n == y.c_n;
}

int readers(const Partition& p, NodeId v) {
  int r = 0;
  for (const Stage& s : p.stages) r += static_cast<int>(std::count(s.inputs.begin(), s.inputs.end(), v));
  return r;
}

}  // namespace

void fuse_paired_epilogues(const Graph& g, Partition* p) {
  for (size_t j = 0; j < p->stages.size(); ++j) {
    const Stage& second = p->stages[j];
    if (second.kind != StageKind::Epilogue || second.epilogue.paired) continue;
    const EpilogueGroup& e = second.epilogue;
    for (size_t i = 0; i < j; ++i) {
      const Stage& first = p->stages[i];
      if (first.kind != StageKind::Epilogue || first.epilogue.paired || first.results.size() != 1) continue;
      const EpilogueGroup& f = first.epilogue;
      const NodeId gate = first.results[0];
      auto at = std::find(e.extra.begin(), e.extra.end(), gate);
      if (at == e.extra.end() || std::count(g.outputs.begin(), g.outputs.end(), gate) || readers(*p, gate) != 1) continue;
      if (g[gate].type.dtype != DType::F32 || !same_a_and_layout(e.gemm, f.gemm) || e.roles != f.roles ||
          e.inner != f.inner)
        continue;
      // The param of the second stage's graph that is the gate: extra holds
      // its params in order without c_param.
      const int x = static_cast<int>(at - e.extra.begin());
      const int g_param = x < e.c_param ? x : x + 1;
      if (!read_in_place(e.graph, g_param)) continue;

      Stage s = second;
      EpilogueGroup& q = s.epilogue;
      q.paired = true;
      q.gemm2 = f.gemm;
      q.graph2 = f.graph;
      q.value2 = f.value;
      q.c2_param = f.c_param;
      q.g_param = g_param;
      q.extra2 = f.extra;
      q.extra.erase(q.extra.begin() + x);
      s.inputs = {q.gemm.a_base, q.gemm.b_base, q.gemm2.b_base};
      s.inputs.insert(s.inputs.end(), q.extra.begin(), q.extra.end());
      s.inputs.insert(s.inputs.end(), q.extra2.begin(), q.extra2.end());
      s.nodes.insert(s.nodes.end(), first.nodes.begin(), first.nodes.end());
      std::sort(s.nodes.begin(), s.nodes.end());
      std::vector<Stage> out;
      for (size_t k = 0; k < p->stages.size(); ++k) {
        if (k == i) continue;
        out.push_back(k == j ? s : std::move(p->stages[k]));
      }
      p->stages = std::move(out);
      --j;  // the paired stage is now at j - 1
      break;
    }
  }
}

}  // namespace axon::loop
