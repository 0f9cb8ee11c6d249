#include "loop/attention_prologue.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/element_def.h"
#include "ir/op.h"

namespace axon::loop {

using namespace axon::ir;

namespace {

bool reduces(const Node& n) { return n.op == Op::ReduceSum || n.op == Op::ReduceMax || n.op == Op::ReduceMin; }

// Whether id's cone holds a reduction (memoised).
bool holds_reduction(const Graph& g, NodeId id, std::map<NodeId, bool>* memo) {
  auto it = memo->find(id);
  if (it != memo->end()) return it->second;
  bool r = reduces(g[id]);
  for (NodeId a : g[id].args) r = holds_reduction(g, a, memo) || r;
  return (*memo)[id] = r;
}

// Whether node id of the row function of shape `full` may be computed one
// row at a time (the contract of attention_prologue.h).
bool row_wise(const Graph& g, NodeId id, const Shape& full, std::map<NodeId, bool>* memo) {
  const Node& n = g[id];
  if (n.op == Op::Einsum || n.op == Op::Concat) return false;
  if (!holds_reduction(g, id, memo)) {
    for (NodeId a : n.args)
      if (!row_wise(g, a, full, memo)) return false;
    return true;
  }
  Shape row(full.begin(), full.end() - 1);
  Shape row1 = row;
  row1.push_back(1);
  const Shape& s = n.type.shape;
  if (reduces(n)) {
    const Node& arg = g[n.args[0]];
    if (n.attrs.ints != std::vector<int64_t>{arg.type.rank() - 1} || arg.type.shape != full) return false;
  } else if (is_elementwise(n.op)) {
    if (s != full && s != row && s != row1) return false;
  } else if (n.op == Op::Broadcast) {
    if (g[n.args[0]].type.shape != row1 || s != full) return false;
  } else if (n.op == Op::Reshape) {
    const Shape& in = g[n.args[0]].type.shape;
    if (!((in == row && s == row1) || (in == row1 && s == row))) return false;
  } else {
    return false;
  }
  for (NodeId a : n.args)
    if (!row_wise(g, a, full, memo)) return false;
  return true;
}

bool read_by_others(const Graph& g, const Partition& p, NodeId v, size_t row, size_t att) {
  if (std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end()) return true;
  for (size_t i = 0; i < p.stages.size(); ++i)
    if (i != row && i != att && std::count(p.stages[i].inputs.begin(), p.stages[i].inputs.end(), v)) return true;
  return false;
}

}  // namespace

void fuse_attention_prologues(const Graph& g, Partition* p) {
  for (size_t k = 0; k < p->stages.size(); ++k) {
    for (bool fused = true; fused;) {  // again after each fusion: Q's and K's row stages may be two
      fused = false;
      Stage& att = p->stages[k];
      if (att.kind != StageKind::Attention || att.attention.has_qk2) break;
      AttentionGroup& a = att.attention;
      const Contraction& qk = a.qk;
      for (size_t r = 0; r < k; ++r) {
        const Stage& row = p->stages[r];
        if ((row.kind != StageKind::Row && row.kind != StageKind::Naive) || row.results.empty()) continue;
        bool ok = true;
        int rq = -1, rk = -1;  // which result is Q, which K
        for (size_t i = 0; i < row.results.size() && ok; ++i) {
          const NodeId v = row.results[i];
          if (v == qk.a_base && v == qk.b_base) ok = false;  // one value as both: not yet
          else if (v == qk.a_base && rq < 0) rq = static_cast<int>(i);
          else if (v == qk.b_base && rk < 0) rk = static_cast<int>(i);
          // Any other result must be read by no stage at all.
          else ok = std::count(att.inputs.begin(), att.inputs.end(), v) == 0;
          // Read by this stage only as Q or K: not as V, nor as an extra.
          ok = ok && !read_by_others(g, *p, v, r, k) && v != a.pv.b_base &&
               std::count(att.inputs.begin() + 2, att.inputs.end(), v) == 0;
        }
        if (!ok || (rq < 0 && rk < 0)) continue;
        const Graph& sub = row.sub;
        auto fits = [&](int res, int64_t rows, int64_t batch_stride, int64_t row_stride, int64_t unit) {
          if (res < 0) return true;
          const NodeId o = sub.outputs[static_cast<size_t>(res)];
          const Shape want = {qk.batch, rows, qk.K};
          std::map<NodeId, bool> memo;
          return sub[o].type.shape == want && sub[o].type.dtype == DType::F32 && batch_stride == rows * qk.K &&
                 row_stride == qk.K && unit == 1 && row_wise(sub, o, want, &memo) && source_param(sub, o) >= 0;
        };
        if (!fits(rq, qk.M, qk.a_batch, qk.a_m, qk.a_k) || !fits(rk, qk.N, qk.b_batch, qk.b_n, qk.b_k)) continue;

        // The inputs the prologues add, rebuilt in order: Q's, then K's.
        att.inputs.resize(att.inputs.size() - a.q_rows.reads.size() - a.k_rows.reads.size());
        auto take = [&](int res, Prologue* pr, size_t slot) {
          if (res < 0) return;
          pr->graph = sub;
          pr->inputs = row.inputs;
          pr->out = sub.outputs[static_cast<size_t>(res)];
          pr->source = source_param(sub, pr->out);
          pr->reads.clear();
          for (int q : params_read(sub, pr->out))
            if (q != pr->source) pr->reads.push_back(q);
          att.inputs[slot] = row.inputs[static_cast<size_t>(pr->source)];
        };
        take(rq, &a.q_rows, 0);
        take(rk, &a.k_rows, 1);
        for (const Prologue* pr : {&a.q_rows, &a.k_rows})
          for (int q : pr->reads) att.inputs.push_back(pr->inputs[static_cast<size_t>(q)]);
        att.nodes.insert(att.nodes.end(), row.nodes.begin(), row.nodes.end());
        std::sort(att.nodes.begin(), att.nodes.end());
        p->stages.erase(p->stages.begin() + static_cast<std::ptrdiff_t>(r));
        --k;
        fused = true;
        break;
      }
    }
  }
}

}  // namespace axon::loop
