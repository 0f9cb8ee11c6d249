#include "loop/epilogue_group.h"

#include <algorithm>

#include "ir/element_def.h"

namespace axon::loop {

using namespace axon::ir;

namespace {

// The role of each output axis of the einsum (0 batch, 1 m, 2 n, -1 a
// unit axis) and, per axis, the product of the extents of the later axes of
// its role (a role of several axes, such as a batch folded into m, is one
// flat axis of the contraction: plan_contraction checked it).
bool output_roles(const Graph& g, NodeId einsum, std::vector<int>* roles, std::vector<int64_t>* inner) {
  const Node& n = g[einsum];
  EinsumSpec sp;
  if (!parse_einsum(n.attrs.text, &sp)) return false;
  roles->clear();
  for (size_t d = 0; d < sp.out.size(); ++d) {
    const char l = sp.out[d];
    const bool in_a = sp.a.find(l) != std::string::npos, in_b = sp.b.find(l) != std::string::npos;
    int role = in_a && in_b ? 0 : in_a ? 1 : 2;
    if (n.type.shape[d] == 1) role = -1;
    roles->push_back(role);
  }
  inner->assign(roles->size(), 1);
  for (size_t d = roles->size(); d-- > 0;)
    for (size_t e = d + 1; e < roles->size(); ++e)
      if ((*roles)[e] == (*roles)[d] && (*roles)[d] >= 0) (*inner)[d] *= n.type.shape[e];
  return true;
}

// Stages other than `self` that read `v`.
int readers(const Partition& p, NodeId v, size_t self) {
  int r = 0;
  for (size_t i = 0; i < p.stages.size(); ++i)
    if (i != self && std::count(p.stages[i].inputs.begin(), p.stages[i].inputs.end(), v)) ++r;
  return r;
}

// The first node of `sub` that is no elementwise function of one element:
// a reduction (with its axes), an einsum or a concat; "" when none.
std::string first_non_elementwise(const Graph& sub) {
  for (NodeId i = 0; i < sub.size(); ++i) {
    const Node& n = sub[i];
    const ReductionDomain rd = reduction_domain(sub, n);
    if (n.op != Op::Einsum && n.op != Op::Concat && rd.extents.empty()) continue;
    std::string t = op_name(n.op);
    if (n.op != Op::Einsum && n.op != Op::Concat) {
      t += " over axes [";
      for (size_t a = 0; a < n.attrs.ints.size(); ++a) t += (a ? ", " : "") + std::to_string(n.attrs.ints[a]);
      t += "] of " + shape_str(sub[n.args.at(0)].type.shape);
    }
    return t;
  }
  return "";
}

// No reduction, einsum or concat: every value is a function of its
// operands at one element (after layout).
bool elementwise_graph(const Graph& sub) { return first_non_elementwise(sub).empty(); }

}  // namespace

std::string epilogue_refusal(const Graph& g, const Partition& p, size_t stage) {
  if (stage >= p.stages.size() || p.stages[stage].kind != StageKind::Contraction) return "";
  const Stage& st = p.stages[stage];
  if (st.results.size() != 1) return "";
  const NodeId S = st.results[0];
  std::vector<size_t> by;
  for (size_t i = 0; i < p.stages.size(); ++i)
    if (i != stage && std::count(p.stages[i].inputs.begin(), p.stages[i].inputs.end(), S)) by.push_back(i);
  if (by.empty()) return "";
  const std::string product = "its product %" + std::to_string(S) + " " + shape_str(g[S].type.shape);
  if (std::count(g.outputs.begin(), g.outputs.end(), S))
    return product + " is an output of the program, so it is stored, and the stage after it reads it from memory";
  if (by.size() > 1)
    return product + " is read by " + std::to_string(by.size()) + " stages; an epilogue must be its only reader";
  const Stage& row = p.stages[by[0]];
  const std::string reader = "the " + std::string(row.kind == StageKind::Naive ? "loops" : stage_kind_name(row.kind)) +
                             " stage reading " + product;
  if (row.kind != StageKind::Row && row.kind != StageKind::Naive) return reader + " is no elementwise stage";
  if (row.results.size() != 1)
    return reader + " computes " + std::to_string(row.results.size()) + " results; an epilogue computes one";
  const NodeId value = row.results[0];
  if (g[value].type.dtype != DType::F32)
    return reader + " computes " + dtype_name(g[value].type.dtype) + ", not f32";
  if (const std::string n = first_non_elementwise(row.sub); !n.empty())
    return reader + " holds a " + n + ": an epilogue is elementwise on the product's tile";
  if (g[value].type.shape != g[S].type.shape)
    return reader + " computes " + shape_str(g[value].type.shape) + ", not the product's shape";
  const auto at = std::find(row.inputs.begin(), row.inputs.end(), S);
  const int param = static_cast<int>(at - row.inputs.begin());
  if (!read_in_place(row.sub, param)) return reader + " reads it through a layout op, not at the element it computes";
  std::vector<int> roles;
  std::vector<int64_t> inner;
  if (!output_roles(g, S, &roles, &inner)) return "the product's einsum \"" + g[S].attrs.text + "\" has no output roles";
  return reader + " takes a later product as its epilogue";
}

bool read_in_place(const Graph& sub, int p) {
  std::vector<char> from(static_cast<size_t>(sub.size()), 0);
  for (NodeId i = 0; i < sub.size(); ++i) {
    const Node& n = sub[i];
    if (n.op == Op::Param) {
      from[static_cast<size_t>(i)] = n.attrs.ints.at(0) == p;
      continue;
    }
    bool reads = false;
    for (NodeId a : n.args) reads = reads || from[static_cast<size_t>(a)];
    if (reads && !is_elementwise(n.op)) return false;
    from[static_cast<size_t>(i)] = reads;
  }
  return true;
}

void fuse_epilogue_groups(const Graph& g, Partition* p) {
  for (size_t r = 0; r < p->stages.size(); ++r) {
    const Stage& row = p->stages[r];
    if ((row.kind != StageKind::Row && row.kind != StageKind::Naive) || row.results.size() != 1) continue;
    const NodeId value = row.results[0];
    if (g[value].type.dtype != DType::F32 || !elementwise_graph(row.sub)) continue;
    // The last product this stage reads that can take it as its epilogue.
    size_t q = p->stages.size();
    int c_param = -1;
    std::vector<int> roles;
    std::vector<int64_t> inner;
    for (size_t i = 0; i < r; ++i) {
      const Stage& st = p->stages[i];
      if (st.kind != StageKind::Contraction || st.results.size() != 1) continue;
      const NodeId S = st.results[0];
      auto at = std::find(row.inputs.begin(), row.inputs.end(), S);
      if (at == row.inputs.end() || g[S].type.shape != g[value].type.shape) continue;
      if (std::count(g.outputs.begin(), g.outputs.end(), S) || readers(*p, S, r) != 0) continue;
      const int param = static_cast<int>(at - row.inputs.begin());
      std::vector<int> rl;
      std::vector<int64_t> in;
      if (!read_in_place(row.sub, param) || !output_roles(g, S, &rl, &in)) continue;
      q = i, c_param = param, roles = rl, inner = in;
    }
    if (c_param < 0) continue;

    Stage e;
    e.kind = StageKind::Epilogue;
    e.epilogue.gemm = p->stages[q].contraction;
    e.epilogue.graph = row.sub;
    e.epilogue.value = row.sub.outputs.at(0);
    e.epilogue.c_param = c_param;
    e.epilogue.roles = roles;
    e.epilogue.inner = inner;
    for (size_t i = 0; i < row.inputs.size(); ++i)
      if (static_cast<int>(i) != c_param) e.epilogue.extra.push_back(row.inputs[i]);
    e.inputs = {e.epilogue.gemm.a_base, e.epilogue.gemm.b_base};
    e.inputs.insert(e.inputs.end(), e.epilogue.extra.begin(), e.epilogue.extra.end());
    e.results = row.results;
    e.nodes = p->stages[q].nodes;
    e.nodes.insert(e.nodes.end(), row.nodes.begin(), row.nodes.end());
    std::sort(e.nodes.begin(), e.nodes.end());
    // In place of the elementwise stage: everything both read is computed
    // before it, and nothing between them reads the product.
    std::vector<Stage> out;
    for (size_t i = 0; i < p->stages.size(); ++i) {
      if (i == q) continue;
      out.push_back(i == r ? e : std::move(p->stages[i]));
    }
    p->stages = std::move(out);
    --r;  // the fused stage is now at r - 1; go on after it
  }
}

}  // namespace axon::loop
