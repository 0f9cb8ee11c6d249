#include "tile/lower_graph.h"

#include <algorithm>
#include <map>
#include <optional>

#include "ir/element_def.h"
#include "ir/printer.h"
#include "ir/real.h"

namespace axon::tile {

using namespace axon::ir;

namespace {

class Lowerer {
 public:
  explicit Lowerer(const Graph& g, const std::string& name) : g_(g) { k_.name = name; }

  Kernel run() {
    plan();
    std::vector<Stmt> body;
    for (NodeId id = 0; id < g_.size(); ++id) lower_node(id, &body);
    output_copies(&body);
    k_.body = Stmt::seq(std::move(body));
    return std::move(k_);
  }

 private:
  void plan() {
    const int n = g_.size();
    live_.assign(n, false);
    for (NodeId o : g_.outputs) live_[o] = true;
    for (NodeId i = n - 1; i >= 0; --i)
      if (live_[i])
        for (NodeId a : g_[i].args) live_[a] = true;

    folded_.assign(n, false);
    for (NodeId i = 0; i < n; ++i) {
      const Node& nd = g_[i];
      if (nd.op == Op::Param || nd.op == Op::Iota || nd.op == Op::Concat || nd.op == Op::Einsum ||
          is_reduction(nd.op))
        continue;
      folded_[i] = std::all_of(nd.args.begin(), nd.args.end(), [&](NodeId a) { return folded_[a]; });
    }

    buf_.assign(n, -1);
    for (size_t p = 0; p < g_.params.size(); ++p) {
      Buffer b;
      b.name = g_.params[p].name;
      b.dtype = g_.params[p].type.dtype;
      b.shape = g_.params[p].type.shape;
      b.scope = Scope::Input;
      b.param = static_cast<int>(p);
      param_buf_.push_back(k_.add_buffer(b));
    }
    for (NodeId i = 0; i < n; ++i)
      if (live_[i] && g_[i].op == Op::Param) buf_[i] = param_buf_[g_[i].attrs.ints[0]];
    for (size_t o = 0; o < g_.outputs.size(); ++o) {
      NodeId id = g_.outputs[o];
      Buffer b;
      b.name = "out" + std::to_string(o);
      b.dtype = g_[id].type.dtype;
      b.shape = g_[id].type.shape;
      b.scope = Scope::Output;
      b.output = static_cast<int>(o);
      int bi = k_.add_buffer(b);
      out_buf_.push_back(bi);
      if (buf_[id] < 0) buf_[id] = bi;  // computed in place
    }
    temp_.assign(n, false);
    for (NodeId i = 0; i < n; ++i)
      if (live_[i] && buf_[i] < 0 && !folded_[i]) {
        Buffer b;
        b.name = "t" + std::to_string(i);
        b.dtype = g_[i].type.dtype;
        b.shape = g_[i].type.shape;
        b.scope = Scope::Memory;
        buf_[i] = k_.add_buffer(b);
        temp_[i] = true;
      }
    last_use_.assign(n, -1);
    for (NodeId i = 0; i < n; ++i)
      if (live_[i])
        for (NodeId a : g_[i].args) last_use_[a] = i;
  }

  // The value of node `id` at index `idx`: a load, or the literal expression
  // of a folded value.
  Value read(NodeId id, const std::vector<Index>& raw) const {
    const Node& n = g_[id];
    std::vector<Index> idx;
    for (const Index& i : raw) idx.push_back(simplify(i, ranges_));
    if (!folded_[id] || buf_[id] >= 0) return Value::load(buf_[id], idx, n.type.dtype);
    std::vector<Value> v;
    for (size_t k = 0; k < n.args.size(); ++k)
      v.push_back(read(n.args[k], operand_index<Index>(g_, n, static_cast<int>(k), idx, {})));
    return Value::apply(n, std::move(v));
  }
  std::vector<Value> operands(const Node& n, const std::vector<Index>& o, const std::vector<Index>& r) const {
    std::vector<Value> v;
    for (size_t k = 0; k < n.args.size(); ++k)
      v.push_back(read(n.args[k], operand_index<Index>(g_, n, static_cast<int>(k), o, r)));
    return v;
  }

  // Loop variables of a nest: `stem` + axis, unit extents as the literal 0.
  struct Nest {
    std::vector<std::pair<std::string, int64_t>> loops;  // outermost first
    Stmt wrap(Stmt inner) const {
      for (auto it = loops.rbegin(); it != loops.rend(); ++it)
        inner = Stmt::loop(it->first, Index(it->second), LoopKind::Serial, std::move(inner));
      return inner;
    }
  };
  // A loop variable of the nest being built; its range serves simplify().
  Index axis(Nest* nest, const std::string& name, int64_t extent) {
    if (extent == 1) return Index(int64_t{0});
    nest->loops.push_back({name, extent});
    ranges_[name] = Interval{0, extent - 1};
    return Index::var(name);
  }

  void lower_node(NodeId id, std::vector<Stmt>* out) {
    const Node& n = g_[id];
    if (n.op == Op::Param || !live_[id]) return;
    if (buf_[id] < 0) return;  // folded: its readers inline it
    if (temp_[id]) out->push_back(Stmt::alloc(buf_[id]));
    out->push_back(Stmt::comment(print_node(g_, id)));
    ReductionDomain dom = reduction_domain(g_, n);
    int64_t terms = 1;
    for (int64_t e : dom.extents) terms *= e;
    const bool native = n.type.dtype == DType::F32 || n.type.dtype == DType::F64 || n.type.dtype == DType::I32 ||
                        n.type.dtype == DType::I64;
    if (n.type.numel() == 0) out->push_back(Stmt::comment("empty: nothing to compute"));
    else if (n.op == Op::Concat) lower_concat(id, out);
    else if (n.op == Op::Einsum && !dom.extents.empty() && native && terms <= kIkjMaxTerms && last_axis_contiguous(n))
      lower_einsum_ikj(id, dom, out);
    else if (!dom.extents.empty()) lower_reduction(id, dom, out);
    else lower_map(id, out);

    std::vector<NodeId> args = n.args;
    std::sort(args.begin(), args.end());
    args.erase(std::unique(args.begin(), args.end()), args.end());
    for (NodeId a : args)
      if (temp_[a] && last_use_[a] == id) out->push_back(Stmt::free(buf_[a]));
  }

  void lower_map(NodeId id, std::vector<Stmt>* out) {
    const Node& n = g_[id];
    Nest nest;
    std::vector<Index> o;
    for (int a = 0; a < n.type.rank(); ++a) o.push_back(axis(&nest, "i" + std::to_string(a), n.type.shape[a]));
    Value v;
    if (n.op == Op::Iota) {
      Node cast{};
      cast.op = Op::Cast;
      cast.type = Type{n.type.dtype, {}};
      v = Value::apply(cast, {Value::index_of(o[n.attrs.ints[0]])});
    } else {
      v = Value::apply(n, operands(n, o, {}));
    }
    out->push_back(nest.wrap(Stmt::store(buf_[id], o, v)));
  }

  void lower_reduction(NodeId id, const ReductionDomain& dom, std::vector<Stmt>* out) {
    const Node& n = g_[id];
    Nest outer, inner;
    std::vector<Index> o, r;
    for (int a = 0; a < n.type.rank(); ++a) o.push_back(axis(&outer, "i" + std::to_string(a), n.type.shape[a]));
    for (size_t b = 0; b < dom.extents.size(); ++b) r.push_back(axis(&inner, "r" + std::to_string(b), dom.extents[b]));
    Buffer acc;
    acc.name = "acc" + std::to_string(id);
    acc.dtype = n.type.dtype;
    acc.scope = Scope::Register;
    int a = k_.add_buffer(acc);
    double identity = combine_identity<ir::Real>(dom.combine, ir::Real{}).v;
    Stmt fold = inner.wrap(Stmt::accumulate(a, {}, dom.combine, Value::apply(n, operands(n, o, r))));
    Stmt body = Stmt::seq({Stmt::alloc(a), Stmt::store(a, {}, Value::constant(identity, n.type.dtype)), fold,
                           Stmt::store(buf_[id], o, Value::load(a, {}, n.type.dtype))});
    out->push_back(outer.loops.empty() ? body : outer.wrap(body));
  }

  // Whether the output's last label is the last label of every operand
  // that carries it: then the i-k-j order (lower_einsum_ikj) reads the
  // operands along rows in its innermost loop. Otherwise (A @ v, A @ B.T)
  // the innermost output axis is a column of an operand, and the einsum is
  // lowered as a reduction: a dot product per output element, along the
  // operands' rows.
  static bool last_axis_contiguous(const Node& n) {
    EinsumSpec s;
    if (!parse_einsum(n.attrs.text, &s) || s.out.empty()) return true;
    const char last = s.out.back();
    for (const std::string* labels : {&s.a, &s.b})
      if (labels->find(last) != std::string::npos && labels->back() != last) return false;
    return true;
  }

  void lower_einsum_ikj(NodeId id, const ReductionDomain& dom, std::vector<Stmt>* out) {
    const Node& n = g_[id];
    const int rank = n.type.rank();
    Nest zero;
    std::vector<Index> z;
    for (int a = 0; a < rank; ++a) z.push_back(axis(&zero, "i" + std::to_string(a), n.type.shape[a]));
    out->push_back(zero.wrap(Stmt::store(buf_[id], z, Value::constant(0.0, n.type.dtype))));
    Nest nest;
    std::vector<Index> o(rank), r;
    for (int a = 0; a + 1 < rank; ++a) o[a] = axis(&nest, "i" + std::to_string(a), n.type.shape[a]);
    for (size_t b = 0; b < dom.extents.size(); ++b) r.push_back(axis(&nest, "r" + std::to_string(b), dom.extents[b]));
    if (rank > 0) o[rank - 1] = axis(&nest, "i" + std::to_string(rank - 1), n.type.shape[rank - 1]);
    out->push_back(nest.wrap(Stmt::accumulate(buf_[id], o, Combine::Sum, Value::apply(n, operands(n, o, r)))));
  }

  void lower_concat(NodeId id, std::vector<Stmt>* out) {
    const Node& n = g_[id];
    const int ax = static_cast<int>(n.attrs.ints[0]);
    const std::vector<int64_t> offsets = concat_offsets(g_, n);
    for (size_t k = 0; k < n.args.size(); ++k) {
      const int64_t ext = g_[n.args[k]].type.shape[ax];
      if (ext == 0) continue;
      Nest nest;
      std::vector<Index> o;
      for (int a = 0; a < n.type.rank(); ++a) {
        const std::string name = "i" + std::to_string(a);
        o.push_back(a == ax ? axis(&nest, name, ext) + Index(offsets[k]) : axis(&nest, name, n.type.shape[a]));
      }
      Value v = read(n.args[k], operand_index<Index>(g_, n, static_cast<int>(k), o, {}));
      out->push_back(nest.wrap(Stmt::store(buf_[id], o, Value::apply(n, {v}))));
    }
  }

  void output_copies(std::vector<Stmt>* out) {
    for (size_t k = 0; k < g_.outputs.size(); ++k) {
      NodeId o = g_.outputs[k];
      if (buf_[o] == out_buf_[k]) continue;
      const int64_t numel = g_[o].type.numel();
      out->push_back(Stmt::comment("out" + std::to_string(k) + " = %" + std::to_string(o) + " (copied)"));
      if (numel == 0) continue;
      out->push_back(Stmt::copy(View{out_buf_[k], Index(int64_t{0}), {1}}, View{buf_[o], Index(int64_t{0}), {1}}, {numel}));
    }
  }

  const Graph& g_;
  Kernel k_;
  std::vector<bool> live_, folded_, temp_;
  std::vector<int> buf_, param_buf_, out_buf_;
  std::vector<NodeId> last_use_;
  std::map<std::string, Interval> ranges_;  // the loop variables of the nest being built
};

}  // namespace

Kernel lower_graph(const Graph& g, const std::string& name) { return Lowerer(g, name.empty() ? "kernel" : name).run(); }

}  // namespace axon::tile
