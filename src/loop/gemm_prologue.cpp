#include "loop/gemm_prologue.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/element_def.h"
#include "ir/op.h"

namespace axon::loop {

using namespace axon::ir;

namespace {

bool heavy(const Node& n, const Graph& g) {
  return n.op == Op::Einsum || n.op == Op::Concat || !reduction_domain(g, n).extents.empty();
}

// The operand's cone within a row stage (`mine`), split: `cone`, the nodes
// computed at each element of the operand (elementwise and layout ops),
// and `leaves`, the smaller values of the stage it reads whose own cones
// hold a reduction (a norm's row statistic, a row max), which the row
// stage then returns. False when an einsum, a concat or a reduction would
// have to be computed at each element.
class ConeSplit {
 public:
  ConeSplit(const Graph& g, const std::set<NodeId>& mine, NodeId base) : g_(g), mine_(mine), numel_(g[base].type.numel()) {}

  bool run(NodeId id) {
    if (!mine_.count(id) || cone.count(id) || leaves.count(id)) return true;
    const Node& n = g_[id];
    if (g_[id].type.numel() < numel_ && holds_heavy(id)) {
      leaves.insert(id);
      return true;
    }
    if (heavy(n, g_)) return false;
    cone.insert(id);
    for (NodeId a : n.args)
      if (!run(a)) return false;
    return true;
  }

  std::set<NodeId> cone, leaves;

 private:
  bool holds_heavy(NodeId id) {
    if (!mine_.count(id)) return false;
    auto it = memo_.find(id);
    if (it != memo_.end()) return it->second;
    bool h = heavy(g_[id], g_);
    for (NodeId a : g_[id].args) h = holds_heavy(a) || h;
    return memo_[id] = h;
  }
  const Graph& g_;
  const std::set<NodeId>& mine_;
  const int64_t numel_;
  std::map<NodeId, bool> memo_;
};

int count_in(const std::vector<NodeId>& v, NodeId x) { return static_cast<int>(std::count(v.begin(), v.end(), x)); }

// Operand `which` (0 A, 1 B) of stage k taken into it when the contract of
// gemm_prologue.h holds; the stage that computed it rebuilt or erased (k
// then moves down). True when it was taken.
bool take_operand(const Graph& g, Partition* p, size_t* k, int which) {
  Stage& st = p->stages[*k];
  const Contraction& c = st.kind == StageKind::Epilogue ? st.epilogue.gemm : st.contraction;
  const NodeId base = which == 0 ? c.a_base : c.b_base;
  // The dense layouts the product may read: [rows, cols] or [batch, rows, cols].
  Shape two, three;
  bool dense = false;
  if (which == 0) {
    two = {c.M, c.K}, three = {c.batch, c.M, c.K};
    dense = c.a_k == 1 && c.a_m == c.K && (c.batch == 1 || c.a_batch == c.M * c.K);
  } else {
    two = {c.K, c.N}, three = {c.batch, c.K, c.N};
    dense = c.b_n == 1 && c.b_k == c.N && (c.batch == 1 || c.b_batch == 0 || c.b_batch == c.K * c.N);
  }
  const Shape& shape = g[base].type.shape;
  const bool batched_view = which == 0 ? c.a_batch != 0 : c.b_batch != 0;
  if (!dense || g[base].type.dtype != DType::F32) return false;
  if (!(shape == two && (c.batch == 1 || !batched_view)) && !(shape == three && c.batch > 1 && batched_view)) return false;
  if (std::count(g.outputs.begin(), g.outputs.end(), base)) return false;
  if (count_in(st.inputs, base) != 1 || st.inputs.at(static_cast<size_t>(which)) != base) return false;
  size_t r = p->stages.size();
  for (size_t i = 0; i < p->stages.size(); ++i) {
    if (i != *k && count_in(p->stages[i].inputs, base)) return false;
    if (count_in(p->stages[i].results, base)) r = i;
  }
  if (r >= *k) return false;
  Stage& row = p->stages[r];
  if (row.kind != StageKind::Row && row.kind != StageKind::Naive) return false;
  const std::set<NodeId> mine(row.nodes.begin(), row.nodes.end());
  ConeSplit split(g, mine, base);
  if (!split.run(base)) return false;
  // The operand's function alone, over the stage's inputs it reads and the
  // leaves.
  const Stage fn = run_stage(g, {split.cone.begin(), split.cone.end()}, {base});
  const Graph& sub = fn.sub;
  const NodeId out = sub.outputs.at(0);
  const int source = source_param(sub, out);
  if (source < 0) return false;

  Prologue pr;
  pr.graph = sub;
  pr.out = out;
  pr.source = source;
  pr.inputs = fn.inputs;
  for (int q : params_read(sub, out))
    if (q != source) pr.reads.push_back(q);
  st.inputs[static_cast<size_t>(which)] = fn.inputs[static_cast<size_t>(source)];
  for (int q : pr.reads) st.inputs.push_back(fn.inputs[static_cast<size_t>(q)]);
  (which == 0 ? st.a_rows : st.b_rows) = std::move(pr);

  // The producer returns the leaves instead of the operand, and keeps its
  // other results; the nodes it no longer computes are this stage's.
  const std::vector<NodeId> before = row.nodes;
  row.results.erase(std::find(row.results.begin(), row.results.end(), base));
  for (NodeId l : split.leaves)
    if (!count_in(row.results, l)) row.results.push_back(l);
  if (!row.results.empty()) rebuild_run_stage(g, &row);
  else row.nodes.clear();
  for (NodeId n : before)
    if (!std::binary_search(row.nodes.begin(), row.nodes.end(), n)) st.nodes.push_back(n);
  std::sort(st.nodes.begin(), st.nodes.end());
  if (row.results.empty()) {
    p->stages.erase(p->stages.begin() + static_cast<std::ptrdiff_t>(r));
    --*k;
  }
  return true;
}

}  // namespace

void fuse_gemm_prologues(const Graph& g, Partition* p) {
  for (size_t k = 0; k < p->stages.size(); ++k) {
    const Stage& st = p->stages[k];
    const bool gemm = st.kind == StageKind::Contraction || (st.kind == StageKind::Epilogue && !st.epilogue.paired);
    if (!gemm) continue;
    take_operand(g, p, &k, 0);
    take_operand(g, p, &k, 1);
  }
}

}  // namespace axon::loop
