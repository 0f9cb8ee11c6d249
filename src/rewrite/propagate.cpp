// Operator propagation: the candidate moves of rewrite.h, the graph editor
// they are built with, and their proofs over symbolic sizes.
#include <algorithm>
#include <cmath>
#include <functional>
#include <iomanip>
#include <optional>
#include <set>
#include <sstream>

#include "rewrite/contraction.h"
#include "rewrite/rewrite.h"
#include "rewrite/size_symbols.h"
#include "support/diagnostic.h"

namespace axon::rewrite {
namespace {

using ir::Graph;
using ir::Node;
using ir::NodeId;
using ir::Op;
using ir::Shape;

using detail::Builder;
using detail::rebuild;

bool is_matmul(const Graph& g, NodeId id) {
  const Node& n = g[id];
  if (n.op != Op::Einsum) return false;
  ir::EinsumSpec s;
  if (!ir::parse_einsum(n.attrs.text, &s)) return false;
  return s.a.size() == 2 && s.b.size() == 2 && s.out.size() == 2 && s.a[1] == s.b[0] && s.out[0] == s.a[0] &&
         s.out[1] == s.b[1] && s.a[0] != s.a[1] && s.b[1] != s.a[1] && s.a[0] != s.b[1];
}

NodeId matmul(Graph& g, NodeId a, NodeId b) { return ir::einsum(g, "mk,kn->mn", a, b); }

NodeId slice_axis(Graph& g, NodeId a, int axis, int64_t start, int64_t len) {
  Shape s = g[a].type.shape;
  std::vector<int64_t> starts(s.size(), 0), steps(s.size(), 1);
  starts[axis] = start;
  s[axis] = len;
  return ir::slice(g, a, starts, steps, s);
}

// ---- factor-out-of-contraction

struct Factor {
  NodeId id;
  bool denominator;
};

void flatten(const Graph& g, NodeId id, bool denom, std::vector<Factor>* out) {
  const Node& n = g[id];
  if (n.op == Op::Mul) {
    flatten(g, n.args[0], denom, out);
    flatten(g, n.args[1], denom, out);
  } else if (n.op == Op::Div) {
    flatten(g, n.args[0], denom, out);
    flatten(g, n.args[1], !denom, out);
  } else {
    out->push_back({id, denom});
  }
}

// Whether factor fi of fs leaves a numerator behind (the operand without
// it is not 1 / something).
bool numerator_left(const std::vector<Factor>& fs, int fi) {
  for (int i = 0; i < static_cast<int>(fs.size()); ++i)
    if (i != fi && !fs[i].denominator) return true;
  return false;
}

// The product of the factors of fs but fi, the numerators first, built
// into ng (map: the old graph's ids to ng's).
NodeId without_factor(Graph& ng, const std::vector<NodeId>& map, const std::vector<Factor>& fs, int fi) {
  NodeId prod = -1;
  for (int i = 0; i < static_cast<int>(fs.size()); ++i)
    if (i != fi && !fs[i].denominator) prod = prod < 0 ? map[fs[i].id] : ir::binary(ng, Op::Mul, prod, map[fs[i].id]);
  for (int i = 0; i < static_cast<int>(fs.size()); ++i)
    if (i != fi && fs[i].denominator) prod = ir::binary(ng, Op::Div, prod, map[fs[i].id]);
  return prod;
}

// The shape a factor of shape ts over `labels` takes laid out along
// `into`'s labels (1 where it has no such axis); empty when that would need
// a transpose.
std::optional<Shape> laid_out(const std::string& labels, const Shape& ts, const std::string& into) {
  Shape target;
  int last = -1;
  for (char l : into) {
    size_t p = labels.find(l);
    int64_t d = p == std::string::npos ? 1 : ts[p];
    if (d != 1) {
      if (static_cast<int>(p) < last) return std::nullopt;  // would need a transpose
      last = static_cast<int>(p);
    }
    target.push_back(d);
  }
  return target;
}

// Where a factor of an einsum's operand goes: into the output (factor-out,
// it varies only along kept axes) or onto the other operand (factor-across,
// it varies only along contracted axes that operand carries too).
enum class FactorInto { Output, Other };

// The factor `f` of operand `side` of einsum `e` laid out for `into`; -1 when
// it varies along an axis `into` does not allow, or cannot be laid out
// without a transpose (and, onto the other operand, when it varies along no
// axis). Checks only when `ng` is null; otherwise builds the reshaped source
// of the factor (new id `nf`) into `ng`.
NodeId factor_laid_out(const Graph& g, NodeId e, int side, NodeId f, FactorInto into, Graph* ng, NodeId nf) {
  ir::EinsumSpec s;
  ir::parse_einsum(g[e].attrs.text, &s);
  const std::string& labels = side == 0 ? s.a : s.b;
  const std::string& other = side == 0 ? s.b : s.a;
  NodeId src = g[f].op == Op::Broadcast ? g[f].args[0] : f;
  const Shape& ts = g[src].type.shape;
  if (ts.size() != labels.size()) return -1;
  bool varies = false;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (ts[i] == 1) continue;
    const bool kept = s.out.find(labels[i]) != std::string::npos;
    if (into == FactorInto::Output ? !kept : kept || other.find(labels[i]) == std::string::npos) return -1;
    varies = true;
  }
  if (into == FactorInto::Other && !varies) return -1;
  const std::optional<Shape> target = laid_out(labels, ts, into == FactorInto::Output ? s.out : other);
  if (!target) return -1;
  if (!ng) return 0;
  NodeId nsrc = g[f].op == Op::Broadcast ? ng->node(nf).args[0] : nf;
  return ng->node(nsrc).type.shape == *target ? nsrc : ir::reshape(*ng, nsrc, *target);
}

// The einsum `e` at a move's site, the factors of its operand `side` and the
// one at index fi, when that factor can be moved `into` (numerator or the
// first of the denominators, see numerator_left).
struct FactorMove {
  NodeId e;
  std::vector<Factor> fs;
  Factor moved;
};
std::optional<FactorMove> factor_move(const Graph& g, const Move& m, int side, int fi, FactorInto into) {
  NodeId e = m.site.at(0);
  if (g[e].op != Op::Einsum) return std::nullopt;
  FactorMove fm{e, {}, {}};
  flatten(g, g[e].args[side], false, &fm.fs);
  if (fm.fs.size() < 2 || fi >= static_cast<int>(fm.fs.size())) return std::nullopt;
  fm.moved = fm.fs[fi];
  if (!numerator_left(fm.fs, fi)) return std::nullopt;
  if (factor_laid_out(g, e, side, fm.moved.id, into, nullptr, -1) < 0) return std::nullopt;
  return fm;
}

// The factor (laid out by factor_laid_out in `ng`) applied to `x`, broadcast
// to x's shape: x * t, or x / t for a denominator.
NodeId apply_factor(Graph& ng, const Factor& moved, NodeId x, NodeId t) {
  const Shape xs = ng[x].type.shape;
  if (ng[t].type.shape != xs) t = ir::broadcast(ng, t, xs);
  return ir::binary(ng, moved.denominator ? Op::Div : Op::Mul, x, t);
}

std::optional<Graph> factor_out(const Graph& g, const Move& m) {
  const int side = m.variant / 100, fi = m.variant % 100;
  std::optional<FactorMove> fm = factor_move(g, m, side, fi, FactorInto::Output);
  if (!fm) return std::nullopt;
  const NodeId e = fm->e;
  std::map<NodeId, Builder> rep;
  rep[e] = [&](Graph& ng, const std::vector<NodeId>& map) {
    const NodeId prod = without_factor(ng, map, fm->fs, fi);
    NodeId a = side == 0 ? prod : map[g[e].args[0]];
    NodeId b = side == 1 ? prod : map[g[e].args[1]];
    NodeId ne = ir::einsum(ng, g[e].attrs.text, a, b);
    NodeId t = factor_laid_out(g, e, side, fm->moved.id, FactorInto::Output, &ng, map[fm->moved.id]);
    return apply_factor(ng, fm->moved, ne, t);
  };
  return rebuild(g, rep);
}

// ---- factor-across-contraction: (x * g) @ W = x @ (g * W), from A to B

std::optional<Graph> factor_across(const Graph& g, const Move& m) {
  const int side = 0, fi = m.variant;
  std::optional<FactorMove> fm = factor_move(g, m, side, fi, FactorInto::Other);
  if (!fm) return std::nullopt;
  const NodeId e = fm->e;
  std::map<NodeId, Builder> rep;
  rep[e] = [&](Graph& ng, const std::vector<NodeId>& map) {
    const NodeId prod = without_factor(ng, map, fm->fs, fi);
    NodeId t = factor_laid_out(g, e, side, fm->moved.id, FactorInto::Other, &ng, map[fm->moved.id]);
    NodeId scaled = apply_factor(ng, fm->moved, map[g[e].args[1 - side]], t);
    NodeId a = side == 0 ? prod : scaled;
    NodeId b = side == 1 ? prod : scaled;
    return ir::einsum(ng, g[e].attrs.text, a, b);
  };
  return rebuild(g, rep);
}

// ---- sum-of-contractions: P@Q + R@S = [P R] @ [Q; S]

std::optional<Graph> sum_of_contractions(const Graph& g, const Move& m) {
  NodeId add = m.site.at(0);
  if (g[add].op != Op::Add) return std::nullopt;
  NodeId e1 = g[add].args[0], e2 = g[add].args[1];
  if (!is_matmul(g, e1) || !is_matmul(g, e2)) return std::nullopt;
  std::map<NodeId, Builder> rep;
  rep[add] = [&](Graph& ng, const std::vector<NodeId>& map) {
    NodeId lhs = ir::concat(ng, {map[g[e1].args[0]], map[g[e2].args[0]]}, 1);
    NodeId rhs = ir::concat(ng, {map[g[e1].args[1]], map[g[e2].args[1]]}, 0);
    return matmul(ng, lhs, rhs);
  };
  return rebuild(g, rep);
}

// ---- shared-operand-merge: X@W1, X@W2 -> X@[W1 W2] sliced

std::optional<Graph> shared_operand(const Graph& g, const Move& m) {
  NodeId e1 = m.site.at(0), e2 = m.site.at(1);
  if (!is_matmul(g, e1) || !is_matmul(g, e2) || g[e1].args[0] != g[e2].args[0] || e1 == e2) return std::nullopt;
  NodeId w1 = g[e1].args[1], w2 = g[e2].args[1];
  // Both weights must exist before the first product (the editor builds in order).
  if (w1 == w2 || std::max(w1, w2) > std::min(e1, e2)) return std::nullopt;
  std::map<NodeId, Builder> rep;
  auto merged = [&](Graph& ng, const std::vector<NodeId>& map) {
    return matmul(ng, map[g[e1].args[0]], ir::concat(ng, {map[w1], map[w2]}, 1));
  };
  rep[e1] = [&](Graph& ng, const std::vector<NodeId>& map) {
    NodeId c = merged(ng, map);
    return slice_axis(ng, c, 1, 0, ng[map[w1]].type.shape[1]);
  };
  rep[e2] = [&](Graph& ng, const std::vector<NodeId>& map) {
    NodeId c = merged(ng, map);
    int64_t n1 = ng[map[w1]].type.shape[1];
    return slice_axis(ng, c, 1, n1, ng[map[w2]].type.shape[1]);
  };
  return rebuild(g, rep);
}

// ---- reassociate: variant 0 (A@B)@C -> A@(B@C), variant 1 the reverse

std::optional<Graph> reassociate(const Graph& g, const Move& m) {
  NodeId e = m.site.at(0);
  if (!is_matmul(g, e)) return std::nullopt;
  NodeId l = g[e].args[0], r = g[e].args[1];
  std::map<NodeId, Builder> rep;
  if (m.variant == 0) {
    if (!is_matmul(g, l)) return std::nullopt;
    rep[e] = [&](Graph& ng, const std::vector<NodeId>& map) {
      return matmul(ng, map[g[l].args[0]], matmul(ng, map[g[l].args[1]], map[r]));
    };
  } else {
    if (!is_matmul(g, r)) return std::nullopt;
    rep[e] = [&](Graph& ng, const std::vector<NodeId>& map) {
      return matmul(ng, matmul(ng, map[l], map[g[r].args[0]]), map[g[r].args[1]]);
    };
  }
  return rebuild(g, rep);
}

// ---- transpose-into-contraction: einsum(transpose(A), B) relabels A

std::optional<Graph> transpose_into(const Graph& g, const Move& m) {
  NodeId e = m.site.at(0);
  if (g[e].op != Op::Einsum) return std::nullopt;
  int side = m.variant;
  NodeId t = g[e].args[side];
  if (g[t].op != Op::Transpose) return std::nullopt;
  ir::EinsumSpec s;
  if (!ir::parse_einsum(g[e].attrs.text, &s)) return std::nullopt;
  std::string& labels = side == 0 ? s.a : s.b;
  const std::vector<int64_t>& perm = g[t].attrs.ints;
  std::string src(labels.size(), '?');
  for (size_t i = 0; i < perm.size(); ++i) src[perm[i]] = labels[i];
  labels = src;
  std::string spec = s.a + "," + s.b + "->" + s.out;
  std::map<NodeId, Builder> rep;
  rep[e] = [&, spec](Graph& ng, const std::vector<NodeId>& map) {
    NodeId a = side == 0 ? map[g[t].args[0]] : map[g[e].args[0]];
    NodeId b = side == 1 ? map[g[t].args[0]] : map[g[e].args[1]];
    return ir::einsum(ng, spec, a, b);
  };
  return rebuild(g, rep);
}

// ---- unary-past-contraction: einsum(u(x), W) -> u(einsum(x, W)). Holds for
// neg, not for exp or tanh: the prover decides.

std::optional<Graph> unary_past(const Graph& g, const Move& m) {
  NodeId e = m.site.at(0);
  if (g[e].op != Op::Einsum) return std::nullopt;
  int side = m.variant;
  NodeId u = g[e].args[side];
  if (!ir::is_elementwise(g[u].op) || g[u].args.size() != 1 || g[u].op == Op::Cast) return std::nullopt;
  std::map<NodeId, Builder> rep;
  rep[e] = [&](Graph& ng, const std::vector<NodeId>& map) {
    NodeId a = side == 0 ? map[g[u].args[0]] : map[g[e].args[0]];
    NodeId b = side == 1 ? map[g[u].args[0]] : map[g[e].args[1]];
    return ir::unary(ng, g[u].op, ir::einsum(ng, g[e].attrs.text, a, b));
  };
  return rebuild(g, rep);
}

// ---- online-softmax: softmax(x) @ V with the key axis split into a tile of
// t and the rest, each tile with its own running max, combined by the
// rescale exp(m_tile - m). Needs the exp axioms. t = min(32, N / 2): a
// literal, so that the rest N - t stays affine in the symbolic size.

// The x of softmax(x) along the last axis when `d` computes it in the
// frontend's form exp(x - max(x)) / sum(exp(x - max(x))); -1 otherwise.
NodeId softmax_input(const Graph& g, NodeId d) {
  auto through = [&](NodeId id, Op op) { return g[id].op == op ? g[id].args[0] : -1; };
  if (g[d].op != Op::Div) return -1;
  NodeId e = g[d].args[0];
  if (g[e].op != Op::Exp) return -1;
  int last = static_cast<int>(g[e].type.shape.size()) - 1;
  NodeId sum = through(through(g[d].args[1], Op::Broadcast), Op::Reshape);
  if (sum < 0 || g[sum].op != Op::ReduceSum || g[sum].args[0] != e || g[sum].attrs.ints != std::vector<int64_t>{last})
    return -1;
  NodeId sub = g[e].args[0];
  if (g[sub].op != Op::Sub) return -1;
  NodeId x = g[sub].args[0];
  NodeId mx = through(through(g[sub].args[1], Op::Broadcast), Op::Reshape);
  if (mx < 0 || g[mx].op != Op::ReduceMax || g[mx].args[0] != x || g[mx].attrs.ints != std::vector<int64_t>{last})
    return -1;
  return x;
}

std::optional<Graph> online_softmax(const Graph& g, const Move& m) {
  NodeId e = m.site.at(0);
  if (g[e].op != Op::Einsum) return std::nullopt;
  ir::EinsumSpec s;
  if (!ir::parse_einsum(g[e].attrs.text, &s)) return std::nullopt;
  NodeId x = softmax_input(g, g[e].args[0]);
  if (x < 0) return std::nullopt;
  // One contracted label, the last of the softmax operand; the output is the
  // operand's other labels followed by one label of V.
  char k = s.a.back();
  size_t kv = s.b.find(k);
  if (s.reduced() != std::string(1, k) || kv == std::string::npos ||
      s.out.substr(0, s.a.size() - 1) != s.a.substr(0, s.a.size() - 1) || s.out.size() != s.a.size())
    return std::nullopt;
  int last = static_cast<int>(s.a.size()) - 1;
  int64_t n = g[x].type.shape[last];
  if (n < 2) return std::nullopt;
  int64_t t = m.tile > 0 ? m.tile : std::min<int64_t>(32, n / 2);
  if (t >= n) return std::nullopt;
  NodeId v = g[e].args[1];
  std::map<NodeId, Builder> rep;
  rep[e] = [&, t, n, last, kv](Graph& ng, const std::vector<NodeId>& map) {
    auto keep = [&](NodeId r) {  // [..] -> [.., 1]
      Shape sh = ng[r].type.shape;
      sh.push_back(1);
      return ir::reshape(ng, r, sh);
    };
    auto bc = [&](NodeId a, NodeId like) { return ir::broadcast(ng, a, ng[like].type.shape); };
    NodeId nx = map[x], nv = map[v];
    NodeId xs[2] = {slice_axis(ng, nx, last, 0, t), slice_axis(ng, nx, last, t, n - t)};
    NodeId vs[2] = {slice_axis(ng, nv, static_cast<int>(kv), 0, t), slice_axis(ng, nv, static_cast<int>(kv), t, n - t)};
    NodeId mt[2], l[2], o[2];
    for (int i = 0; i < 2; ++i) {
      mt[i] = keep(ir::reduce(ng, Op::ReduceMax, xs[i], {last}));
      NodeId ex = ir::unary(ng, Op::Exp, ir::binary(ng, Op::Sub, xs[i], bc(mt[i], xs[i])));
      l[i] = keep(ir::reduce(ng, Op::ReduceSum, ex, {last}));
      o[i] = ir::einsum(ng, g[e].attrs.text, ex, vs[i]);
    }
    NodeId mm = ir::binary(ng, Op::Maximum, mt[0], mt[1]);
    NodeId num = -1, den = -1;
    for (int i = 0; i < 2; ++i) {
      NodeId a = ir::unary(ng, Op::Exp, ir::binary(ng, Op::Sub, mt[i], mm));
      NodeId on = ir::binary(ng, Op::Mul, o[i], bc(a, o[i]));
      NodeId ln = ir::binary(ng, Op::Mul, l[i], a);
      num = num < 0 ? on : ir::binary(ng, Op::Add, num, on);
      den = den < 0 ? ln : ir::binary(ng, Op::Add, den, ln);
    }
    return ir::binary(ng, Op::Div, num, bc(den, num));
  };
  return rebuild(g, rep);
}

// ---- tanh-via-exp: c + tanh(u) -> (c - 1) + 2 / (1 + exp(-2u)), the
// constant folded away when c = 1 (GELU's 1 + tanh): one exp and one
// division instead of tanh's polynomial, exp, division and select. Needs
// the tanh-as-exp axiom. Only next to a constant, where the cancellation
// of 2 / (1 + e) - 1 for small u is absorbed by c.

// The scalar `v` as a value of type `ty` (a constant, reshaped and broadcast).
NodeId splat(Graph& ng, double v, const ir::Type& ty) {
  return ir::broadcast(ng, ir::reshape(ng, ir::constant(ng, v, ty.dtype), Shape(ty.shape.size(), 1)), ty.shape);
}

// The value of a constant seen through reshapes and broadcasts; nullopt otherwise.
std::optional<double> constant_value(const Graph& g, NodeId id) {
  while (g[id].op == Op::Broadcast || g[id].op == Op::Reshape) id = g[id].args[0];
  if (g[id].op != Op::Constant) return std::nullopt;
  return g[id].attrs.value;
}

std::optional<Graph> tanh_via_exp(const Graph& g, const Move& m) {
  NodeId add = m.site.at(0);
  if (g[add].op != Op::Add || !ir::is_float(g[add].type.dtype)) return std::nullopt;
  const int t = m.variant;  // the operand that is the tanh
  NodeId th = g[add].args[t];
  std::optional<double> c = constant_value(g, g[add].args[1 - t]);
  if (g[th].op != Op::Tanh || !c) return std::nullopt;
  std::map<NodeId, Builder> rep;
  rep[add] = [&, th, c](Graph& ng, const std::vector<NodeId>& map) {
    NodeId u = map[g[th].args[0]];
    const ir::Type ty = ng[u].type;
    NodeId e = ir::unary(ng, Op::Exp, ir::binary(ng, Op::Mul, u, splat(ng, -2.0, ty)));
    NodeId r = ir::binary(ng, Op::Div, splat(ng, 2.0, ty), ir::binary(ng, Op::Add, splat(ng, 1.0, ty), e));
    return *c == 1.0 ? r : ir::binary(ng, Op::Add, splat(ng, *c - 1.0, ty), r);
  };
  return rebuild(g, rep);
}

// ---- fold-constants: the scalar constants of a product (a tree of mul and
// div) gathered into one, when that loses nothing: every product and
// quotient of the constants exact in double, and the result the same in the
// graph's dtype as the constants rounded one by one would give (all but one
// constant a power of two, or every constant and the result exact in the
// dtype). (0.5 x) (2 / t) -> x / t; (c u) (-2) -> (-2c) u. The other
// factors keep their order; a factor of 1 is dropped.

bool power_of_two(double v) {
  int e = 0;
  return std::isfinite(v) && v != 0 && std::fabs(std::frexp(v, &e)) == 0.5;
}

bool exact_in(double v, ir::DType d) {
  if (d != ir::DType::F32) return true;
  const float f = static_cast<float>(v);
  return std::isfinite(f) && static_cast<double>(f) == v && (v == 0 || std::fabs(f) >= 0x1p-126f);
}

// The folded constant of the product at `id` and its non-constant factors;
// nullopt when there is nothing to fold or the fold is not exact.
struct Folded {
  double k = 1;
  std::vector<Factor> rest;
};
std::optional<Folded> fold_product(const Graph& g, NodeId id) {
  const ir::DType dt = g[id].type.dtype;
  if (!ir::is_float(dt)) return std::nullopt;
  std::vector<Factor> fs;
  flatten(g, id, false, &fs);
  Folded f;
  int constants = 0, odd = 0;  // constants, and those that are not powers of two
  bool each_exact = true;
  for (const Factor& x : fs) {
    std::optional<double> c = constant_value(g, x.id);
    if (!c) {
      f.rest.push_back(x);
      continue;
    }
    if (!std::isfinite(*c) || *c == 0) return std::nullopt;
    ++constants;
    odd += power_of_two(*c) ? 0 : 1;
    each_exact = each_exact && exact_in(*c, dt);
    const double next = x.denominator ? f.k / *c : f.k * *c;
    // The step is exact in double: the residual of the rounded result is 0.
    const double residual = x.denominator ? std::fma(next, *c, -f.k) : std::fma(f.k, *c, -next);
    if (!std::isfinite(next) || next == 0 || residual != 0) return std::nullopt;
    f.k = next;
  }
  const bool dtype_safe = odd <= 1 || (each_exact && exact_in(f.k, dt));
  if (f.rest.empty() || !dtype_safe || !(constants >= 2 || (constants == 1 && f.k == 1.0))) return std::nullopt;
  return f;
}

std::optional<Graph> fold_constants(const Graph& g, const Move& m) {
  NodeId at = m.site.at(0);
  if (g[at].op != Op::Mul && g[at].op != Op::Div) return std::nullopt;
  std::optional<Folded> f = fold_product(g, at);
  if (!f) return std::nullopt;
  std::map<NodeId, Builder> rep;
  rep[at] = [&, f](Graph& ng, const std::vector<NodeId>& map) {
    NodeId num = -1, den = -1;
    for (const Factor& x : f->rest) {
      NodeId& side = x.denominator ? den : num;
      side = side < 0 ? map[x.id] : ir::binary(ng, Op::Mul, side, map[x.id]);
    }
    const NodeId k = f->k != 1.0 || num < 0 ? splat(ng, f->k, g[at].type) : -1;
    num = num < 0 ? k : k < 0 ? num : ir::binary(ng, Op::Mul, k, num);
    return den < 0 ? num : ir::binary(ng, Op::Div, num, den);
  };
  return rebuild(g, rep);
}

std::string node_name(const Graph& g, NodeId id) {
  const Node& n = g[id];
  if (n.op == Op::Param) return g.params.at(n.attrs.ints.at(0)).name;
  return "%" + std::to_string(id) + "(" + ir::op_name(n.op) + ")";
}

}  // namespace

std::optional<Graph> apply_move(const Graph& g, const Move& m) {
  try {
    if (m.kind == "factor-out-of-contraction") return factor_out(g, m);
    if (m.kind == "factor-across-contraction") return factor_across(g, m);
    if (m.kind == "sum-of-contractions") return sum_of_contractions(g, m);
    if (m.kind == "shared-operand-merge") return shared_operand(g, m);
    if (m.kind == "reassociate") return reassociate(g, m);
    if (m.kind == "transpose-into-contraction") return transpose_into(g, m);
    if (m.kind == "unary-past-contraction") return unary_past(g, m);
    if (m.kind == "online-softmax") return online_softmax(g, m);
    if (m.kind == "tanh-via-exp") return tanh_via_exp(g, m);
    if (m.kind == "fold-constants") return fold_constants(g, m);
    if (m.kind == "sum-into-contraction") return detail::sum_into_contraction(g, m);
    if (m.kind == "reassociate-chain") return detail::reassociate_chain(g, m);
    if (m.kind == "expand-square-of-difference") return detail::expand_square(g, m);
    if (m.kind == "library-rule") return apply_library_rule(g, m);
  } catch (const std::exception&) {
    return std::nullopt;  // the builders refused the shapes: the move does not apply here
  }
  return std::nullopt;
}

std::vector<Move> candidate_moves(const Graph& g) {
  std::vector<Move> out;
  std::vector<bool> live(g.size(), false);
  for (NodeId o : g.outputs) live[o] = true;  // nodes reaching an output
  for (NodeId i = g.size() - 1; i >= 0; --i)
    if (live[i])
      for (NodeId a : g[i].args) live[a] = true;
  auto add = [&](Move m) {
    if (apply_move(g, m)) out.push_back(std::move(m));
  };
  std::vector<NodeId> matmuls;
  for (NodeId i = 0; i < g.size(); ++i) {
    if (!live[i]) continue;
    const Node& n = g[i];
    if (n.op == Op::Einsum) {
      for (int side = 0; side < 2; ++side) {
        std::vector<Factor> fs;
        flatten(g, n.args[side], false, &fs);
        if (fs.size() >= 2)
          for (int f = 0; f < static_cast<int>(fs.size()) && f < 100; ++f) {
            add({"factor-out-of-contraction",
                 std::string(fs[f].denominator ? "divide by " : "multiply by ") + node_name(g, fs[f].id) +
                     " after the contraction " + node_name(g, i) + " instead of before it (operand " +
                     std::to_string(side) + ")",
                 {i}, side * 100 + f});
            // One way only, A to B (the weight, whose packing applies it at
            // no cost, tile/lower_gemm.h), so that moves do not cycle.
            if (side == 0)
              add({"factor-across-contraction",
                   std::string(fs[f].denominator ? "divide operand 1" : "multiply operand 1") + " of the contraction " +
                       node_name(g, i) + " by " + node_name(g, fs[f].id) + " instead of operand 0",
                   {i}, f});
          }
        add({"unary-past-contraction",
             std::string("apply ") + node_name(g, n.args[side]) + " after the contraction " + node_name(g, i),
             {i}, side});
        if (g[n.args[side]].op == Op::Transpose)
          add({"transpose-into-contraction",
               "fold the transpose " + node_name(g, n.args[side]) + " into the contraction " + node_name(g, i),
               {i}, side});
      }
      {
        NodeId x = softmax_input(g, n.args[0]);
        Move m{"online-softmax",
               "softmax @ V at " + node_name(g, i) +
                   " over two tiles of the key axis (a tile of min(32, N/2) and the rest) with running maxima",
               {i}, 0};
        if (x >= 0) m.split_size = g[x].type.shape.back();
        add(m);
      }
      if (is_matmul(g, i)) {
        matmuls.push_back(i);
        add({"reassociate", "(A@B)@C -> A@(B@C) at " + node_name(g, i), {i}, 0});
        add({"reassociate", "A@(B@C) -> (A@B)@C at " + node_name(g, i), {i}, 1});
      }
    }
    if (n.op == Op::Add)
      for (int t = 0; t < 2; ++t)
        if (g[n.args[t]].op == Op::Tanh)
          add({"tanh-via-exp",
               "c + tanh(u) as (c - 1) + 2 / (1 + exp(-2u)) at " + node_name(g, i) + " (one exp, no tanh)", {i}, t});
    if (n.op == Op::Mul || n.op == Op::Div)
      if (std::optional<Folded> f = fold_product(g, i)) {
        std::ostringstream k;
        k << std::setprecision(17) << f->k;
        add({"fold-constants", "the constants of the product " + node_name(g, i) + " as one, " + k.str(), {i}, 0});
      }
    if (n.op == Op::Add)
      add({"sum-of-contractions",
           "P@Q + R@S as one contraction [P R]@[Q; S] at " + node_name(g, i), {i}, 0});
  }
  for (Move& m : detail::contraction_moves(g, live)) add(std::move(m));
  for (size_t a = 0; a < matmuls.size(); ++a)
    for (size_t b = a + 1; b < matmuls.size(); ++b)
      add({"shared-operand-merge",
           node_name(g, matmuls[a]) + " and " + node_name(g, matmuls[b]) + " share " +
               node_name(g, g[matmuls[a]].args[0]) + ": one contraction over concatenated weights",
           {matmuls[a], matmuls[b]}, 0});
  return out;
}

Graph resize(const Graph& g, const std::map<int64_t, int64_t>& sizes) {
  auto sub = [&](Shape s) {
    for (int64_t& d : s) {
      auto it = sizes.find(d);
      if (it != sizes.end()) d = it->second;
    }
    return s;
  };
  Graph ng;
  ng.entry = g.entry;
  for (ir::ParamInfo p : g.params) {
    p.type.shape = sub(p.type.shape);
    ng.params.push_back(p);
  }
  for (NodeId i = 0; i < g.size(); ++i) {
    Node n = g[i];
    n.type.shape = sub(n.type.shape);
    if (n.op == Op::Slice) n.attrs.ints = sub(n.attrs.ints);
    NodeId id = ng.make(std::move(n));
    if (id != i) throw InternalError("resize: node " + std::to_string(i) + " merged with an earlier one");
  }
  ng.outputs = g.outputs;
  return ng;
}

verify::smt::ProofResult prove_move(const Graph& g, const Move& m, const DiscoverOptions& o) {
  const SizeSymbols sym = size_symbols(g, m.split_size);
  verify::smt::RewriteCase c;
  c.name = m.kind;
  c.dims = sym.dims;
  c.build = [g, m, sym](const verify::smt::DimSizes& d) {
    Move mm = m;
    if (!sym.split_a.empty()) mm.tile = d.at(sym.split_a);
    Graph lhs = resize(g, sym.at(d));
    std::optional<Graph> rhs = apply_move(lhs, mm);
    if (!rhs) throw InternalError("the move does not apply at these sizes");
    lhs.outputs = g.outputs;
    return verify::smt::RewritePair{ir::compact(lhs), std::move(*rhs)};
  };
  verify::smt::ProofOptions po;
  po.timeout_ms = o.timeout_ms;
  po.budget_ms = o.budget_ms;
  po.numeric_trials = o.numeric_trials;
  po.axioms = o.axioms;
  if (m.kind == "online-softmax") po.axioms = verify::smt::AxiomSet::exp_rules();
  if (m.kind == "tanh-via-exp") po.axioms = verify::smt::AxiomSet{verify::smt::Axiom::TanhAsExp};
  try {
    return verify::smt::prove_equal(c, po);
  } catch (const std::exception& e) {
    verify::smt::ProofResult r;
    r.reason = std::string("outside the encoding: ") + e.what();
    return r;
  }
}

std::vector<Candidate> discover(const Graph& g, const DiscoverOptions& o) {
  std::vector<Candidate> out;
  Cost before = cost(g);
  for (const Move& m : candidate_moves(g)) {
    Candidate c{m, *apply_move(g, m), {}, before, {}};
    c.after_cost = cost(c.after);
    c.proof = prove_move(g, m, o);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace axon::rewrite
