#include "loop/gemm_prologue.h"

#include <algorithm>
#include <set>

#include "ir/element_def.h"
#include "ir/op.h"

namespace axon::loop {

using namespace axon::ir;

namespace {

// Whether each element of id is a function of values read through views:
// no reduction, einsum or concat in its cone (tile/inline_value.h).
bool elementwise_cone(const Graph& g, NodeId id, std::set<NodeId>* seen) {
  if (!seen->insert(id).second) return true;
  const Node& n = g[id];
  if (n.op == Op::Einsum || n.op == Op::Concat || !reduction_domain(g, n).extents.empty()) return false;
  for (NodeId a : n.args)
    if (!elementwise_cone(g, a, seen)) return false;
  return true;
}

// The params (indices) of out's cone, ascending.
std::vector<int> params_read(const Graph& sub, NodeId out) {
  std::vector<NodeId> stack = {out};
  std::set<NodeId> seen;
  std::set<int> params;
  while (!stack.empty()) {
    NodeId id = stack.back();
    stack.pop_back();
    if (!seen.insert(id).second) continue;
    if (sub[id].op == Op::Param) params.insert(static_cast<int>(sub[id].attrs.ints.at(0)));
    for (NodeId a : sub[id].args) stack.push_back(a);
  }
  return {params.begin(), params.end()};
}

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
  const size_t res = static_cast<size_t>(std::find(row.results.begin(), row.results.end(), base) - row.results.begin());
  const Graph& sub = row.sub;
  const NodeId out = sub.outputs.at(res);
  std::set<NodeId> seen;
  if (!elementwise_cone(sub, out, &seen)) return false;
  int source = -1;
  for (int q : params_read(sub, out))
    if (source < 0 && sub.params[static_cast<size_t>(q)].type.shape == shape &&
        sub.params[static_cast<size_t>(q)].type.dtype == DType::F32)
      source = q;
  if (source < 0) return false;

  OperandPrologue pr;
  pr.graph = sub;
  pr.out = out;
  pr.source = source;
  pr.inputs = row.inputs;
  for (int q : params_read(sub, out))
    if (q != source) pr.reads.push_back(q);
  st.inputs[static_cast<size_t>(which)] = row.inputs[static_cast<size_t>(source)];
  for (int q : pr.reads) st.inputs.push_back(row.inputs[static_cast<size_t>(q)]);
  (which == 0 ? st.a_rows : st.b_rows) = std::move(pr);

  // The producer keeps its other results; the nodes it no longer computes
  // are this stage's.
  const std::vector<NodeId> before = row.nodes;
  row.results.erase(row.results.begin() + static_cast<std::ptrdiff_t>(res));
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
