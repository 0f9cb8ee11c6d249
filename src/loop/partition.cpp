// partition_graph: contractions become their own stages; the nodes between
// them, in topological order, form runs; a run that fits the row-kernel form
// is one Row stage, otherwise each of its connected pieces is tried alone.
#include "loop/partition.h"

#include "loop/attention_group.h"
#include "loop/attention_prologue.h"
#include "loop/epilogue_group.h"
#include "loop/gemm_prologue.h"
#include "loop/paired_epilogue.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace axon::loop {

using namespace axon::ir;

const char* stage_kind_name(StageKind k) {
  switch (k) {
    case StageKind::Contraction: return "contraction";
    case StageKind::Copy: return "copy";
    case StageKind::Row: return "row";
    case StageKind::Attention: return "attention";
    case StageKind::Epilogue: return "epilogue";
    default: return "naive";
  }
}

namespace {

// Values that any subgraph can recompute for itself instead of reading.
bool cloneable(const Node& n) { return n.op == Op::Constant || n.op == Op::Iota; }

// A node read as `base` through element strides (one per axis of the node).
struct View {
  NodeId base = -1;
  std::vector<int64_t> strides;
};

bool dense_for(const Shape& shape, const std::vector<int64_t>& strides) {
  std::vector<int64_t> d = row_major_strides(shape);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] > 1 && strides[i] != d[i]) return false;
  return true;
}

// The deepest view of `v` through Transpose, dense Reshape and unit-dim
// Broadcast; a node that is none of these (or sits on a Constant/Iota) is its
// own base.
View view_of(const Graph& g, NodeId v) {
  const Node& n = g[v];
  View self{v, row_major_strides(n.type.shape)};
  if (n.op != Op::Transpose && n.op != Op::Reshape && n.op != Op::Broadcast) return self;
  const NodeId arg = n.args[0];
  if (cloneable(g[arg])) return self;
  View x = view_of(g, arg);
  View out{x.base, {}};
  if (n.op == Op::Transpose) {
    for (int64_t p : n.attrs.ints) out.strides.push_back(x.strides[static_cast<size_t>(p)]);
  } else if (n.op == Op::Reshape) {
    if (!dense_for(g[arg].type.shape, x.strides)) return self;
    out.strides = row_major_strides(n.type.shape);
  } else {  // Broadcast keeps the rank and stretches unit dims
    const Shape& in = g[arg].type.shape;
    if (in.size() != n.type.shape.size()) return self;
    for (size_t i = 0; i < in.size(); ++i) out.strides.push_back(in[i] == n.type.shape[i] ? x.strides[i] : 0);
  }
  return out;
}

bool repeated(const std::string& labels) {
  std::set<char> s(labels.begin(), labels.end());
  return s.size() != labels.size();
}

}  // namespace

bool plan_contraction(const Graph& g, NodeId e, Contraction* out, std::string* why) {
  const Node& n = g[e];
  auto no = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (n.op != Op::Einsum) return no("not an einsum");
  EinsumSpec sp;
  if (!parse_einsum(n.attrs.text, &sp)) return no("malformed einsum spec");
  if (n.type.dtype != DType::F32 || g[n.args[0]].type.dtype != DType::F32 || g[n.args[1]].type.dtype != DType::F32)
    return no("not float32");
  if (repeated(sp.a) || repeated(sp.b) || repeated(sp.out)) return no("a repeated label (a diagonal)");
  const Shape& sa = g[n.args[0]].type.shape;
  const Shape& sb = g[n.args[1]].type.shape;
  // A label of extent 1 summed in one operand only reads index 0: it is no
  // axis of the product (its stride never counts).
  auto unit_in = [](const std::string& labels, const Shape& shape, char c) {
    size_t p = labels.find(c);
    return p != std::string::npos && shape[p] == 1;
  };
  std::string batch, m, nn, k;
  for (char c : sp.a) {
    bool in_b = sp.b.find(c) != std::string::npos, in_o = sp.out.find(c) != std::string::npos;
    if (in_b && in_o) batch += c;
    else if (in_o) m += c;
    else if (in_b) k += c;
    else if (!unit_in(sp.a, sa, c)) return no(std::string("label '") + c + "' is summed in one operand only");
  }
  for (char c : sp.b) {
    bool in_a = sp.a.find(c) != std::string::npos, in_o = sp.out.find(c) != std::string::npos;
    if (in_a) continue;
    if (in_o) nn += c;
    else if (!unit_in(sp.b, sb, c)) return no(std::string("label '") + c + "' is summed in one operand only");
  }
  const View va = view_of(g, n.args[0]), vb = view_of(g, n.args[1]);
  if (cloneable(g[va.base]) || cloneable(g[vb.base])) return no("an operand is a constant");
  const std::vector<int64_t> sc = row_major_strides(n.type.shape);
  auto size_of = [&](char l) -> int64_t {
    size_t p = sp.a.find(l);
    return p != std::string::npos ? sa[p] : sb[sp.b.find(l)];
  };
  // Orders each role's labels as the output (K: as a) lists them.
  auto in_order = [&](const std::string& role, const std::string& order) {
    std::string r;
    for (char c : order)
      if (role.find(c) != std::string::npos) r += c;
    return r;
  };
  batch = in_order(batch, sp.out), m = in_order(m, sp.out), nn = in_order(nn, sp.out), k = in_order(k, sp.a);
  // A role of several labels is one flat axis when, in every tensor holding
  // it, each label's stride is the next one's times its size (unit labels
  // aside); its stride is then the last label's.
  bool flat = true;
  auto flat_stride = [&](const std::string& role, const std::string& labels, const std::vector<int64_t>& strides) {
    int64_t innermost = 0, expect = -1;
    for (size_t i = role.size(); i-- > 0;) {  // inner to outer
      const int64_t sz = size_of(role[i]);
      if (sz == 1) continue;
      const size_t p = labels.find(role[i]);
      if (p == std::string::npos) return int64_t{0};  // the role is not in this tensor
      if (expect < 0) innermost = strides[p];
      else if (strides[p] != expect) flat = false;
      expect = strides[p] * sz;
    }
    return innermost;
  };
  auto size = [&](const std::string& role) {
    int64_t v = 1;
    for (char c : role) v *= size_of(c);
    return v;
  };
  Contraction c;
  c.batch = size(batch), c.M = size(m), c.N = size(nn), c.K = size(k);
  c.a_base = va.base, c.b_base = vb.base;
  c.a_batch = flat_stride(batch, sp.a, va.strides), c.a_m = flat_stride(m, sp.a, va.strides);
  c.a_k = flat_stride(k, sp.a, va.strides);
  c.b_batch = flat_stride(batch, sp.b, vb.strides), c.b_k = flat_stride(k, sp.b, vb.strides);
  c.b_n = flat_stride(nn, sp.b, vb.strides);
  c.c_batch = flat_stride(batch, sp.out, sc), c.c_m = flat_stride(m, sp.out, sc), c.c_n = flat_stride(nn, sp.out, sc);
  if (!flat) return no("the labels of a role do not form one strided axis (batch '" + batch + "', m '" + m +
                       "', n '" + nn + "', k '" + k + "')");
  if (c.batch > 1 && c.c_batch == 0) return no("batched output without a batch stride");
  *out = c;
  return true;
}

bool is_matrix_vector(const Contraction& c) { return c.batch == 1 && (c.M == 1 || c.N == 1); }

namespace {

// The values a run of nodes reads from outside it (Constants and Iotas are
// recomputed in the run), ascending.
std::vector<NodeId> run_inputs(const Graph& g, const Stage& s) {
  std::set<NodeId> mine(s.nodes.begin(), s.nodes.end());
  std::set<NodeId> in;
  for (NodeId i : s.nodes)
    for (NodeId a : g[i].args)
      if (!mine.count(a) && !cloneable(g[a])) in.insert(a);
  return {in.begin(), in.end()};
}

// A run's subgraph over its inputs and results, and Row or Naive.
void build_run_sub(const Graph& g, Stage& s) {
  Graph sub;
  sub.entry = g.entry;
  std::map<NodeId, NodeId> m;
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    NodeId in = s.inputs[k];
    std::string name =
        g[in].op == Op::Param ? g.params[static_cast<size_t>(g[in].attrs.ints[0])].name : "v" + std::to_string(in);
    sub.params.push_back({name, g[in].type});
    m[in] = param(sub, static_cast<int>(k));
  }
  for (NodeId i : s.nodes) {
    Node nd = g[i];
    for (NodeId& a : nd.args) {
      if (!m.count(a)) m[a] = sub.make(g[a]);  // a Constant or Iota (no operands)
      a = m[a];
    }
    m[i] = sub.make(nd);
  }
  for (NodeId r : s.results) sub.outputs.push_back(m.at(r));
  s.row = plan_row_kernel(sub);
  s.kind = s.row.ok ? StageKind::Row : StageKind::Naive;
  s.sub = std::move(sub);
}

class Partitioner {
 public:
  explicit Partitioner(const Graph& g) : g_(g), n_(g.size()) {}

  Partition run() {
    plan_nodes();
    assign_results();
    Partition p;
    for (Stage& s : stages_) {
      if (s.kind == StageKind::Row || s.kind == StageKind::Naive) build_sub(s);
      p.stages.push_back(std::move(s));
    }
    fuse_attention_groups(g_, &p);
    fuse_attention_prologues(g_, &p);
    fuse_epilogue_groups(g_, &p);
    fuse_paired_epilogues(g_, &p);
    fuse_gemm_prologues(g_, &p);
    p.whole_graph = p.stages.size() == 1 && (p.stages[0].kind == StageKind::Row || p.stages[0].kind == StageKind::Naive);
    return p;
  }

 private:
  // Which nodes are computed, and by which stage.
  void plan_nodes() {
    std::vector<std::optional<Contraction>> con(static_cast<size_t>(n_));
    for (NodeId i = 0; i < n_; ++i) {
      Contraction c;
      // A matrix-vector product is memory-bound (each operand element read
      // once for one multiply-add; the GEMM's register tiles would be 1/nr
      // full): it is lowered as loops, with the work around it.
      if (g_[i].op == Op::Einsum && plan_contraction(g_, i, &c, nullptr) && !is_matrix_vector(c))
        con[static_cast<size_t>(i)] = c;
    }
    copy_.assign(static_cast<size_t>(n_), std::nullopt);
    std::vector<std::vector<NodeId>> readers(static_cast<size_t>(n_));
    for (NodeId i = 0; i < n_; ++i)
      for (NodeId a : g_[i].args) readers[static_cast<size_t>(a)].push_back(i);
    std::set<NodeId> outputs(g_.outputs.begin(), g_.outputs.end());
    for (NodeId i = 0; i < n_; ++i) {
      if (g_[i].op != Op::Transpose) continue;
      View v = view_of(g_, i);
      if (v.base == i || cloneable(g_[v.base])) continue;
      if (read_in_loops(i, v, readers, outputs)) continue;
      copy_[static_cast<size_t>(i)] = LayoutCopy{v.base, v.strides};
    }
    std::vector<char> need(static_cast<size_t>(n_), 0);
    for (NodeId o : g_.outputs) need[static_cast<size_t>(o)] = 1;
    for (NodeId i = n_ - 1; i >= 0; --i) {
      if (!need[static_cast<size_t>(i)]) continue;
      if (con[static_cast<size_t>(i)]) {
        need[static_cast<size_t>(con[static_cast<size_t>(i)]->a_base)] = 1;
        need[static_cast<size_t>(con[static_cast<size_t>(i)]->b_base)] = 1;
      } else if (copy_[static_cast<size_t>(i)]) {
        need[static_cast<size_t>(copy_[static_cast<size_t>(i)]->base)] = 1;
      } else {
        for (NodeId a : g_[i].args) need[static_cast<size_t>(a)] = 1;
      }
    }
    std::vector<NodeId> run;
    for (NodeId i = 0; i < n_; ++i) {
      if (!need[static_cast<size_t>(i)] || g_[i].op == Op::Param) continue;
      if (cloneable(g_[i]) && !outputs.count(i)) continue;  // recomputed where read
      if (con[static_cast<size_t>(i)]) {
        flush(run);
        Stage s;
        s.kind = StageKind::Contraction;
        s.nodes = {i};
        s.contraction = *con[static_cast<size_t>(i)];
        stages_.push_back(std::move(s));
      } else {
        run.push_back(i);
      }
    }
    flush(run);
  }

  // Whether Transpose `t`, the view `v` of a buffer, is better read in place
  // by the loops of the stage that uses it than copied by a Copy stage of
  // its own: when its last axis stays the buffer's unit-stride axis over at
  // least kContiguousRun elements (a vector loop along it reads whole lines
  // of both), or when it is no output and everything computed from it is
  // elementwise maps of its own shape (one Store-only nest, which the loops
  // pipeline's transpose_blocks reads in register-transposed blocks,
  // tile/passes/transpose_blocks.h). Either way no intermediate buffer is
  // written and read back.
  bool read_in_loops(NodeId t, const View& v, const std::vector<std::vector<NodeId>>& readers,
                     const std::set<NodeId>& outputs) const {
    static constexpr int64_t kContiguousRun = 16;  // float32 elements of one 64-byte line
    const Shape& shape = g_[t].type.shape;
    if (shape.empty()) return false;
    if (v.strides.back() == 1 && shape.back() >= kContiguousRun) return true;
    if (outputs.count(t) || readers[static_cast<size_t>(t)].empty()) return false;
    std::vector<NodeId> todo = readers[static_cast<size_t>(t)];
    std::set<NodeId> seen;
    while (!todo.empty()) {
      const NodeId u = todo.back();
      todo.pop_back();
      if (!seen.insert(u).second) continue;
      if (!is_elementwise(g_[u].op) || g_[u].type.shape != shape) return false;
      for (NodeId r : readers[static_cast<size_t>(u)]) todo.push_back(r);
    }
    return true;
  }

  // A run becomes one Row stage when it fits the row-kernel form, else one
  // stage per connected piece (each Row when it fits, else Naive).
  // Transposes of buffers are Copy stages of their own, listed before the
  // run's other stages; a Copy of a value the run itself computes (a
  // transpose of a product of its inputs) cuts the run there, so that the
  // stage computing its base comes first.
  void flush(std::vector<NodeId>& run) {
    const std::set<NodeId> in_run(run.begin(), run.end());
    for (size_t k = 0; k < run.size(); ++k) {
      const std::optional<LayoutCopy>& c = copy_[static_cast<size_t>(run[k])];
      if (!c || !in_run.count(c->base)) continue;
      std::vector<NodeId> head(run.begin(), run.begin() + static_cast<long>(k));
      std::vector<NodeId> tail(run.begin() + static_cast<long>(k), run.end());
      flush(head);
      flush(tail);
      run.clear();
      return;
    }
    std::vector<NodeId> rest;
    for (NodeId i : run) {
      if (!copy_[static_cast<size_t>(i)]) {
        rest.push_back(i);
        continue;
      }
      Stage s;
      s.kind = StageKind::Copy;
      s.nodes = {i};
      s.copy = *copy_[static_cast<size_t>(i)];
      stages_.push_back(std::move(s));
    }
    run.clear();
    if (rest.empty()) return;
    if (!fits_row_form(rest)) {
      // Values that depend on no input (a causal mask built from iotas and
      // constants) get a stage of their own; the rest may then fit the form.
      auto [fixed, varying] = split_fixed(rest);
      if (!fixed.empty() && !varying.empty()) {
        add_pieces(fixed);
        add_pieces(varying);
        return;
      }
    }
    add_pieces(rest);
  }

  // One Row stage when `nodes` fit the row-kernel form, else one stage per
  // connected piece.
  void add_pieces(const std::vector<NodeId>& nodes) {
    std::vector<std::vector<NodeId>> pieces = components(nodes);
    if (pieces.size() > 1 && !fits_row_form(nodes)) {
      for (auto& p : pieces) add_run_stage(p);
    } else {
      add_run_stage(nodes);
    }
  }

  // {nodes computed from Constants and Iotas alone, the others}; reshapes and
  // broadcasts of fixed values that only feed varying ones stay with the
  // varying nodes, so the fixed stage writes the small value, not its broadcast.
  std::pair<std::vector<NodeId>, std::vector<NodeId>> split_fixed(const std::vector<NodeId>& nodes) const {
    std::set<NodeId> mine(nodes.begin(), nodes.end());
    std::map<NodeId, bool> fixed;
    for (NodeId i : nodes) {
      bool f = true;
      for (NodeId a : g_[i].args) f = f && (cloneable(g_[a]) || (mine.count(a) && fixed[a]));
      fixed[i] = f;
    }
    std::map<NodeId, std::vector<NodeId>> users;
    for (NodeId i : nodes)
      for (NodeId a : g_[i].args)
        if (mine.count(a)) users[a].push_back(i);
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      const NodeId i = *it;
      if (!fixed[i] || (g_[i].op != Op::Reshape && g_[i].op != Op::Broadcast) || users[i].empty()) continue;
      if (std::all_of(users[i].begin(), users[i].end(), [&](NodeId u) { return !fixed[u]; })) fixed[i] = false;
    }
    std::pair<std::vector<NodeId>, std::vector<NodeId>> out;
    for (NodeId i : nodes) (fixed[i] ? out.first : out.second).push_back(i);
    return out;
  }

  std::vector<std::vector<NodeId>> components(const std::vector<NodeId>& run) const {
    std::map<NodeId, NodeId> parent;
    for (NodeId i : run) parent[i] = i;
    std::function<NodeId(NodeId)> find = [&](NodeId x) { return parent[x] == x ? x : parent[x] = find(parent[x]); };
    for (NodeId i : run)
      for (NodeId a : g_[i].args)
        if (parent.count(a)) parent[find(a)] = find(i);
    std::map<NodeId, std::vector<NodeId>> groups;
    for (NodeId i : run) groups[find(i)].push_back(i);
    std::vector<std::vector<NodeId>> out;
    for (auto& [root, nodes] : groups) out.push_back(nodes);
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x[0] < y[0]; });
    return out;
  }

  // Trial build of a run's subgraph with the values no node of the run reads
  // as its outputs. The real stage may have more outputs (values later
  // stages read); build_sub decides Row or Naive again for it, so a trial
  // that passes can still end as a Naive stage, never as a wrong one.
  bool fits_row_form(const std::vector<NodeId>& run) const {
    Stage s;
    s.nodes = run;
    std::set<NodeId> used;
    for (NodeId i : run)
      for (NodeId a : g_[i].args) used.insert(a);
    for (NodeId i : run)
      if (!used.count(i)) s.results.push_back(i);
    s.inputs = inputs_of(s);
    build_sub(s);
    return s.kind == StageKind::Row;
  }

  void add_run_stage(const std::vector<NodeId>& nodes) {
    Stage s;
    s.kind = StageKind::Naive;  // build_sub decides Row or Naive
    s.nodes = nodes;
    stages_.push_back(std::move(s));
  }

  std::vector<NodeId> inputs_of(const Stage& s) const { return run_inputs(g_, s); }

  // Results: values a later stage reads, and the graph's outputs.
  void assign_results() {
    std::set<NodeId> wanted(g_.outputs.begin(), g_.outputs.end());
    for (Stage& s : stages_) {
      if (s.kind == StageKind::Contraction) s.inputs = {s.contraction.a_base, s.contraction.b_base};
      else if (s.kind == StageKind::Copy) s.inputs = {s.copy.base};
      else s.inputs = inputs_of(s);
      for (NodeId i : s.inputs) wanted.insert(i);
    }
    for (Stage& s : stages_)
      for (NodeId i : s.nodes)
        if (wanted.count(i)) s.results.push_back(i);
  }

  void build_sub(Stage& s) const { build_run_sub(g_, s); }

  const Graph& g_;
  const NodeId n_;
  std::vector<Stage> stages_;
  std::vector<std::optional<LayoutCopy>> copy_;  // per node: the Copy stage a Transpose can be
};

}  // namespace

Partition partition_graph(const Graph& g) { return Partitioner(g).run(); }

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

int source_param(const Graph& sub, NodeId out) {
  for (int p : params_read(sub, out))
    if (sub.params[static_cast<size_t>(p)].type.shape == sub[out].type.shape &&
        sub.params[static_cast<size_t>(p)].type.dtype == DType::F32)
      return p;
  return -1;
}

Stage run_stage(const Graph& g, std::vector<NodeId> nodes, std::vector<NodeId> results) {
  Stage s;
  s.kind = StageKind::Naive;
  s.nodes = std::move(nodes);
  s.results = std::move(results);
  s.inputs = run_inputs(g, s);
  build_run_sub(g, s);
  return s;
}

void rebuild_run_stage(const Graph& g, Stage* s) {
  // The nodes the results need, within the stage.
  const std::set<NodeId> mine(s->nodes.begin(), s->nodes.end());
  std::set<NodeId> need;
  std::vector<NodeId> todo = s->results;
  while (!todo.empty()) {
    const NodeId i = todo.back();
    todo.pop_back();
    if (!mine.count(i) || !need.insert(i).second) continue;
    for (NodeId a : g[i].args) todo.push_back(a);
  }
  s->nodes.assign(need.begin(), need.end());
  s->inputs = run_inputs(g, *s);
  build_run_sub(g, *s);
}

}  // namespace axon::loop
