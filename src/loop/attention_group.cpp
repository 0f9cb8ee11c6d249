#include "loop/attention_group.h"

#include "ir/element_def.h"

#include <algorithm>
#include <set>

namespace axon::loop {

using namespace axon::ir;

namespace {

// The node under a chain of Reshapes and Broadcasts.
NodeId through_layout(const Graph& g, NodeId id) {
  while (g[id].op == Op::Reshape || g[id].op == Op::Broadcast) id = g[id].args[0];
  return id;
}

// A reduction of `x` over its last axis alone, kept as a broadcast over it.
bool row_reduction_of(const Graph& g, NodeId broadcast, Op op, NodeId x) {
  const NodeId r = through_layout(g, broadcast);
  const Node& n = g[r];
  return n.op == op && n.args[0] == x && n.attrs.ints.size() == 1 && n.attrs.ints[0] == g[x].type.rank() - 1;
}

// Whether `sub` (one output) is softmax over the last axis of an
// elementwise node: its id in *score.
bool softmax_of_score(const Graph& sub, NodeId* score) {
  if (sub.outputs.size() != 1) return false;
  const Node& p = sub[sub.outputs[0]];
  if (p.op != Op::Div || p.type.dtype != DType::F32) return false;
  const NodeId e = p.args[0];
  if (sub[e].op != Op::Exp || !row_reduction_of(sub, p.args[1], Op::ReduceSum, e)) return false;
  const Node& d = sub[sub[e].args[0]];
  if (d.op != Op::Sub) return false;
  const NodeId x = d.args[0];
  if (!row_reduction_of(sub, d.args[1], Op::ReduceMax, x)) return false;
  for (NodeId i = 0; i < sub.size(); ++i) {
    const Op op = sub[i].op;
    if ((op == Op::Einsum || op == Op::Concat) && i != x) return false;
  }
  // X itself must be elementwise down to the params.
  std::vector<NodeId> stack = {x};
  while (!stack.empty()) {
    const Node& n = sub[stack.back()];
    stack.pop_back();
    if (n.op == Op::ReduceSum || n.op == Op::ReduceMax || n.op == Op::ReduceMin || n.op == Op::Einsum ||
        n.op == Op::Concat)
      return false;
    for (NodeId a : n.args) stack.push_back(a);
  }
  *score = x;
  return true;
}

// Whether `id` is computed from no parameter (iotas, literals, elementwise
// and layout ops only), so a kernel can compute it from an element's index.
bool from_index_alone(const Graph& g, NodeId id) {
  const Node& n = g[id];
  if (n.op == Op::Param) return false;
  if (n.op == Op::Iota || n.op == Op::Constant) return true;
  if (n.op == Op::Einsum || n.op == Op::Concat || n.op == Op::ReduceSum || n.op == Op::ReduceMax ||
      n.op == Op::ReduceMin || !reduction_domain(g, n).extents.empty())
    return false;
  for (NodeId a : n.args)
    if (!from_index_alone(g, a)) return false;
  return true;
}

bool dense3(const Contraction& c, int64_t batch_stride, int64_t m, int64_t n) {
  return c.c_batch == batch_stride && c.c_m == m && c.c_n == n;
}

// Stages other than `skip` that read `v`, and whether it is an output.
bool read_elsewhere(const Graph& g, const Partition& p, NodeId v, const std::set<size_t>& skip) {
  if (std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end()) return true;
  for (size_t i = 0; i < p.stages.size(); ++i)
    if (!skip.count(i) && std::count(p.stages[i].inputs.begin(), p.stages[i].inputs.end(), v)) return true;
  return false;
}

}  // namespace

void fuse_attention_groups(const Graph& g, Partition* p) {
  for (size_t k = 0; k < p->stages.size(); ++k) {
    const Stage& pv = p->stages[k];
    if (pv.kind != StageKind::Contraction) continue;
    const Contraction& c2 = pv.contraction;
    const NodeId P = c2.a_base;
    // The row stage that computes P, and the product whose result it reads.
    size_t r = p->stages.size(), q = p->stages.size();
    for (size_t i = 0; i < k; ++i)
      if (p->stages[i].results == std::vector<NodeId>{P}) r = i;
    if (r == p->stages.size()) continue;
    const Stage& row = p->stages[r];
    if (row.kind != StageKind::Row && row.kind != StageKind::Naive) continue;
    NodeId x = -1;
    if (!softmax_of_score(row.sub, &x)) continue;
    int s_param = -1;
    for (size_t i = 0; i < r && s_param < 0; ++i) {
      const Stage& st = p->stages[i];
      if (st.kind != StageKind::Contraction || st.results.size() != 1) continue;
      for (size_t a = 0; a < row.inputs.size(); ++a)
        if (row.inputs[a] == st.results[0]) q = i, s_param = static_cast<int>(a);
    }
    if (s_param < 0) continue;
    const Contraction& c1 = p->stages[q].contraction;
    const NodeId S = p->stages[q].results[0];
    if (g[S].type.rank() != 3 || g[P].type.rank() != 3 || g[S].type.shape != g[P].type.shape) continue;
    const int64_t B = c1.batch, M = c1.M, N = c1.N, Dv = c2.N;
    if (!dense3(c1, M * N, N, 1) || c2.batch != B || c2.M != M || c2.K != N) continue;
    if (c2.a_batch != M * N || c2.a_m != N || c2.a_k != 1 || c2.b_n != 1 || c2.c_n != 1) continue;
    if (M % 4 != 0 || N % 64 != 0 || Dv % 64 != 0 || g[S].type.shape[0] != B) continue;
    if (read_elsewhere(g, *p, S, {r}) || read_elsewhere(g, *p, P, {k})) continue;

    Stage a;
    a.kind = StageKind::Attention;
    a.attention.qk = c1;
    a.attention.pv = c2;
    a.attention.score_graph = row.sub;
    a.attention.score = x;
    a.attention.s_param = s_param;
    a.inputs = {c1.a_base, c1.b_base, c2.b_base};
    a.results = pv.results;
    a.nodes = p->stages[q].nodes;
    a.nodes.insert(a.nodes.end(), row.nodes.begin(), row.nodes.end());
    a.nodes.insert(a.nodes.end(), pv.nodes.begin(), pv.nodes.end());
    // An extra computed from the index alone (a causal mask) is computed
    // in the kernel, where the lowering can see which blocks it masks; a
    // stage that only produced it for this row goes.
    std::set<size_t> gone = {q, r};
    // A second product over the same scores' indices, read by the score
    // alone (MLA's q_pe . k_pe^T), is computed in the kernel.
    for (size_t i = 0; i < row.inputs.size() && !a.attention.has_qk2; ++i) {
      if (static_cast<int>(i) == s_param) continue;
      for (size_t j = 0; j < r; ++j) {
        const Stage& st = p->stages[j];
        if (j == q || st.kind != StageKind::Contraction || st.results != std::vector<NodeId>{row.inputs[i]}) continue;
        const Contraction& c3 = st.contraction;
        if (c3.batch != B || c3.M != M || c3.N != N || !dense3(c3, M * N, N, 1)) continue;
        if (g[row.inputs[i]].type.shape != g[S].type.shape || read_elsewhere(g, *p, row.inputs[i], {r})) continue;
        a.attention.has_qk2 = true;
        a.attention.qk2 = c3;
        a.attention.s2_param = static_cast<int>(i);
        a.inputs.push_back(c3.a_base);
        a.inputs.push_back(c3.b_base);
        a.nodes.insert(a.nodes.end(), st.nodes.begin(), st.nodes.end());
        gone.insert(j);
        break;
      }
    }
    for (size_t i = 0; i < row.inputs.size(); ++i) {
      if (static_cast<int>(i) == s_param) continue;
      const NodeId e = row.inputs[i];
      const bool computed = from_index_alone(g, e) && !read_elsewhere(g, *p, e, {r});
      a.attention.extra.push_back(e);
      a.attention.computed.push_back(computed);
      if (static_cast<int>(i) == a.attention.s2_param) continue;
      if (!computed) {
        a.inputs.push_back(e);
        continue;
      }
      for (size_t j = 0; j < r; ++j) {
        const Stage& st = p->stages[j];
        if (gone.count(j) || std::find(st.results.begin(), st.results.end(), e) == st.results.end()) continue;
        bool used = false;
        for (NodeId res : st.results) used = used || read_elsewhere(g, *p, res, {r, j});
        if (used) continue;
        gone.insert(j);
        a.nodes.insert(a.nodes.end(), st.nodes.begin(), st.nodes.end());
      }
    }
    std::sort(a.nodes.begin(), a.nodes.end());
    // In place of the second product: everything it and the row read is
    // computed before it.
    std::vector<Stage> out;
    size_t before = 0;  // stages gone before k
    for (size_t i = 0; i < p->stages.size(); ++i) {
      if (gone.count(i)) {
        before += i < k;
        continue;
      }
      out.push_back(i == k ? a : std::move(p->stages[i]));
    }
    p->stages = std::move(out);
    // The attention stage is now at k - before: go on from the one after it.
    k -= before;
  }
}

}  // namespace axon::loop
