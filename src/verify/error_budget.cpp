#include "verify/error_budget.h"

#include <cmath>
#include <limits>

#include "ir/element_def.h"
#include "ir/real.h"

namespace axon::verify {

using namespace axon::ir;

namespace {

// The unit roundoff of a floating dtype (0 for the others).
double unit_roundoff(DType d) { return float_format(d).eps / 2; }

constexpr double kTranscendentalUlps = 4;

// The rounding error of a sum of n terms, as a multiple of u * sum|t|: the
// worst case (n - 1) for short sums, else the probabilistic bound
// lambda * sqrt(n) of Higham and Mary (holds with probability at least
// 1 - 2 exp(-lambda^2 / 2) per element for any summation order, whatever
// the tiling), with lambda = 8.
double sum_error_factor(double n) { return std::min(n - 1, 8 * std::sqrt(n)); }

DType bound_dtype(DType d) { return d == DType::Bool ? DType::Bool : DType::F64; }

// Builds, inside a copy of the original graph, nodes that compute E for each
// node. Everything is evaluated in f64.
class BoundBuilder {
 public:
  BoundBuilder(const Graph& src, bool with_values) : src_(src), with_values_(with_values) {
    g_.entry = src.entry + "_error_bound";
    for (const ParamInfo& p : src.params) g_.params.push_back(ParamInfo{p.name, Type{bound_dtype(p.type.dtype), p.type.shape}});
  }

  Graph build() {
    for (int i = 0; i < src_.size(); ++i) {
      value_.push_back(copy_value(i));
      bound_.push_back(bound_of(i));
    }
    for (NodeId o : src_.outputs) g_.outputs.push_back(bound_[o] >= 0 ? bound_[o] : zeros(src_[o].type.shape));
    if (with_values_)
      for (NodeId o : src_.outputs) g_.outputs.push_back(value_[o]);
    return compact(g_);
  }

 private:
  // The value of source node i, recomputed in f64 (bools stay bool; integer
  // values are exact in f64).
  NodeId copy_value(NodeId i) {
    const Node& n = src_[i];
    Node c = n;
    for (NodeId& a : c.args) a = value_[a];
    if (n.op == Op::Param) return param(g_, static_cast<int>(n.attrs.ints[0]));
    if (n.op == Op::Cast) {
      NodeId x = c.args[0];
      if (n.type.dtype == DType::Bool) return cast(g_, x, DType::Bool);
      if (is_integer(n.type.dtype)) return cast(g_, cast(g_, x, DType::I64), DType::F64);  // truncates
      // Round as the reference does, then carry the value in f64.
      return cast(g_, cast(g_, x, n.type.dtype), DType::F64);
    }
    c.type.dtype = bound_dtype(n.type.dtype);
    return g_.make(std::move(c));
  }

  NodeId k(double v, const Shape& s) { return broadcast_scalar(constant(g_, v, DType::F64), s); }
  NodeId broadcast_scalar(NodeId c, const Shape& s) {
    if (s.empty()) return c;
    return broadcast(g_, reshape(g_, c, Shape(s.size(), 1)), s);
  }
  NodeId zeros(const Shape& s) { return k(0, s); }
  NodeId abs_(NodeId x) { return unary(g_, Op::Abs, x); }
  NodeId add(NodeId a, NodeId b) {
    if (a < 0) return b;
    if (b < 0) return a;
    return binary(g_, Op::Add, a, b);
  }
  NodeId mul(NodeId a, NodeId b) { return binary(g_, Op::Mul, a, b); }
  NodeId scale(double c, NodeId x) {
    Shape s = g_[x].type.shape;  // a copy: k() grows the node vector
    return mul(k(c, s), x);
  }
  // E of an operand, or -1 when exactly zero.
  NodeId E(NodeId src_operand) { return bound_[src_operand]; }
  NodeId E_or_zero(NodeId src_operand) {
    return bound_[src_operand] >= 0 ? bound_[src_operand] : zeros(src_[src_operand].type.shape);
  }

  // m E for a magnitude m >= 0 and a bound E >= 0: an exact operand (E = 0)
  // adds nothing, and an unbounded one (E = inf) leaves the product
  // unbounded even where m = 0. Plain m * E is 0 * inf = NaN there: a
  // softmax whose scores carry a bound past 709 has exp(...) = 0 with an
  // infinite E, its sum an infinite E, and e / sum then read |0| * inf
  // (the gate's wide_range inputs on GQA decode rejected kernels one ulp
  // from the reference under that NaN budget).
  NodeId times(NodeId m, NodeId e) {
    NodeId p = mul(m, e);
    Shape s = g_[p].type.shape;  // a copy: k() grows the node vector
    NodeId unbounded = binary(g_, Op::Gt, e, k(std::numeric_limits<double>::max(), s));
    p = select(g_, unbounded, k(std::numeric_limits<double>::infinity(), s), p);
    return select(g_, binary(g_, Op::Eq, e, k(0, s)), k(0, s), p);
  }
  // A magnitude for an einsum with bounds, raised to at least the smallest
  // subnormal double: an infinite bound times a zero entry then stays
  // infinite instead of NaN, and a finite one grows by under 5e-324 per term.
  NodeId nonzero_magnitude(NodeId x) {
    Shape s = g_[x].type.shape;  // a copy: k() grows the node vector
    return binary(g_, Op::Maximum, abs_(x), k(std::numeric_limits<double>::denorm_min(), s));
  }

  // Where a value is beyond the largest finite number of its dtype, a plain
  // evaluation holds inf there, and what follows from it can land anywhere
  // (x / (1 + exp(-x)) gives -0 for x = -89 in f32, where the reference is
  // about -2e-37): E is infinite there, which promises nothing downstream.
  static double largest_finite(DType dt) {
    return dt == DType::F32 ? std::numeric_limits<float>::max()
           : dt == DType::F16 ? 65504.0
           : dt == DType::BF16 ? 0x1.fep127
                               : 0;
  }
  NodeId unbounded_where_overflowing(NodeId e, NodeId v, DType dt) {
    const double top = largest_finite(dt);
    if (top == 0 || e < 0) return e;
    Shape s = g_[v].type.shape;  // a copy: k() grows the node vector
    NodeId over = binary(g_, Op::Gt, abs_(v), k(top, s));
    return select(g_, over, k(std::numeric_limits<double>::infinity(), s), e);
  }

  NodeId bound_of(NodeId i) {
    const Node& n = src_[i];
    const DType dt = n.type.dtype;
    const double u = unit_roundoff(dt);
    const double uf = kTranscendentalUlps * u;
    const Shape& shape = n.type.shape;
    if (dt == DType::Bool) return -1;
    NodeId v = value_[i];
    // The rounding of the result: unit * |v| plus the dtype's smallest
    // normal magnitude, and none where v is infinite: in f64 an infinite
    // result comes from infinite operands (a mask's -inf), and is exact.
    // (unit * inf would make exp(-inf - m) = 0 carry 0 * inf = NaN, a
    // bound that promises nothing, into causal attention.) The absolute
    // term is underflow, which unit * |v| does not cover: a result below
    // the smallest normal is a subnormal or, where the kernel flushes, 0
    // (x * x of x = 1e-28 is 0 in float32 and 1e-56 in the reference;
    // sqrt(sum(x * x)) then differs from it by far more than its relative
    // budget, numpy's float32 answer included).
    auto rounding = [&](double unit) -> NodeId {
      if (unit == 0) return -1;
      Shape s = shape;
      NodeId inf = binary(g_, Op::Gt, abs_(v), k(std::numeric_limits<double>::max(), s));
      return select(g_, inf, zeros(s), add(scale(unit, abs_(v)), k(float_format(dt).tiny, s)));
    };
    auto arg = [&](int j) { return n.args[j]; };
    auto val = [&](int j) { return value_[n.args[j]]; };
    switch (n.op) {
      case Op::Param:
      case Op::Iota:
        return -1;
      case Op::Constant: {
        double rounded = dt == DType::F32 ? static_cast<float>(n.attrs.value)
                         : dt == DType::F64 ? n.attrs.value
                         : dt == DType::F16 ? round_to_f16(n.attrs.value)
                         : dt == DType::BF16 ? round_to_bf16(n.attrs.value)
                                             : std::trunc(n.attrs.value);
        double e = std::fabs(rounded - n.attrs.value);
        return std::isfinite(e) && e > 0 ? constant(g_, e, DType::F64) : -1;
      }
      case Op::Neg:
      case Op::Abs:
        return E(arg(0));
      case Op::Add:
      case Op::Sub:
        return add(add(E(arg(0)), E(arg(1))), rounding(u));
      case Op::Mul: {
        NodeId e = -1;
        if (E(arg(0)) >= 0) e = add(e, times(abs_(val(1)), E(arg(0))));
        if (E(arg(1)) >= 0) e = add(e, times(abs_(val(0)), E(arg(1))));
        return add(e, rounding(u));
      }
      case Op::Div: {
        NodeId e = -1;
        if (E(arg(0)) >= 0) e = add(e, E(arg(0)));
        if (E(arg(1)) >= 0) e = add(e, times(abs_(v), E(arg(1))));
        if (e >= 0) e = binary(g_, Op::Div, e, abs_(val(1)));
        e = add(e, rounding(u));
        // A denominator past the dtype's largest finite value (silu's
        // 1 + exp(-x) for x < -88.7 in f32) is infinite in the kernel, so a
        // finite numerator gives 0 there: the error is |v| itself, not the
        // unbounded E of the overflowing denominator.
        const double top = largest_finite(dt);
        if (top > 0 && e >= 0 && E(arg(1)) >= 0) {
          Shape s = shape;
          NodeId over = binary(g_, Op::Gt, abs_(val(1)), k(top, s));
          NodeId num_finite = binary(g_, Op::Le, add(abs_(val(0)), E_or_zero(arg(0))), k(top, s));
          NodeId cap = add(abs_(v), k(std::ldexp(1.0, -126), s));
          e = select(g_, binary(g_, Op::And, over, num_finite), cap, e);
        }
        return e;
      }
      case Op::Exp: {
        NodeId e = -1;
        if (E(arg(0)) >= 0) {
          e = times(abs_(v), binary(g_, Op::Sub, unary(g_, Op::Exp, E(arg(0))), k(1, shape)));
          // |v| (exp(E) - 1) is exp(a + E) - exp(a); where exp(a) underflows
          // to 0 that is exp(a + E) itself, finite while a + E < 709 even
          // where E passes 709 and the product is infinite (softmax over
          // scores of wide range).
          NodeId under = binary(g_, Op::Eq, v, k(0, shape));
          e = select(g_, under, unary(g_, Op::Exp, add(val(0), E(arg(0)))), e);
        }
        return unbounded_where_overflowing(add(e, rounding(uf)), v, dt);
      }
      case Op::Log: {
        NodeId e = -1;
        if (E(arg(0)) >= 0) {
          // E / |a|, except that an unbounded operand stays unbounded: where
          // a itself is infinite (log(1 + exp(y)) for y past 709) that
          // quotient is inf / inf = NaN, a budget that promises nothing and
          // passes nothing (mish after a matmul of large values).
          e = binary(g_, Op::Div, E(arg(0)), abs_(val(0)));
          NodeId unbounded = binary(g_, Op::Gt, E(arg(0)), k(std::numeric_limits<double>::max(), shape));
          e = select(g_, unbounded, k(std::numeric_limits<double>::infinity(), shape), e);
        }
        return add(e, rounding(uf));
      }
      case Op::Sqrt: {
        NodeId e = -1;
        if (E(arg(0)) >= 0) {
          NodeId lin = binary(g_, Op::Div, E(arg(0)), scale(2, v));
          e = binary(g_, Op::Minimum, lin, unary(g_, Op::Sqrt, E(arg(0))));
        }
        return add(e, rounding(u));
      }
      case Op::Tanh: {
        NodeId e = -1;
        if (E(arg(0)) >= 0) {
          NodeId slope = binary(g_, Op::Add, binary(g_, Op::Sub, k(1, shape), mul(v, v)), E(arg(0)));
          e = mul(E(arg(0)), binary(g_, Op::Minimum, k(1, shape), slope));
          // tanh is monotone, so over |a| +- E it moves by exactly
          // tanh(|a| + E) - tanh(|a| - E): far tighter where tanh
          // saturates (GELU of a large pre-activation), where the slope
          // bound above stays near E.
          NodeId a = abs_(val(0));
          NodeId spread = binary(g_, Op::Sub, unary(g_, Op::Tanh, add(a, E(arg(0)))),
                                 unary(g_, Op::Tanh, binary(g_, Op::Sub, a, E(arg(0)))));
          // An infinite operand with an infinite bound makes a - E = NaN:
          // there the range of tanh, 2, still bounds the change.
          spread = select(g_, binary(g_, Op::Eq, spread, spread), spread, k(2, shape));
          e = binary(g_, Op::Minimum, e, spread);
        }
        return add(e, rounding(uf));
      }
      case Op::Sin:
      case Op::Cos:
        return add(E(arg(0)), k(uf, shape));
      case Op::Pow: {
        // d/da a^p = p a^(p-1); the exponent is a constant (exact).
        NodeId e = -1;
        if (E(arg(0)) >= 0) {
          NodeId p = val(1);
          NodeId base = add(abs_(val(0)), E(arg(0)));
          NodeId slope = mul(abs_(p), binary(g_, Op::Pow, base, binary(g_, Op::Sub, p, k(1, shape))));
          e = times(slope, E(arg(0)));
        }
        return add(e, rounding(uf));
      }
      case Op::Floor:
      case Op::Cast: {
        if (n.op == Op::Cast && is_float(dt)) {
          NodeId e = E(arg(0));
          double from_u = unit_roundoff(src_[arg(0)].type.dtype);
          return from_u > 0 && u <= from_u ? e : add(e, rounding(u));
        }
        // Rounding to an integer can move by one wherever the operand is uncertain.
        if (E(arg(0)) < 0) return -1;
        return add(E(arg(0)), k(1, shape));
      }
      case Op::Maximum:
      case Op::Minimum:
        if (E(arg(0)) < 0 && E(arg(1)) < 0) return -1;
        return binary(g_, Op::Maximum, E_or_zero(arg(0)), E_or_zero(arg(1)));
      case Op::Select:
        if (E(arg(1)) < 0 && E(arg(2)) < 0) return -1;
        return select(g_, val(0), E_or_zero(arg(1)), E_or_zero(arg(2)));
      case Op::ReduceMax:
      case Op::ReduceMin:
        return E(arg(0)) < 0 ? -1 : reduce(g_, Op::ReduceMax, E(arg(0)), n.attrs.ints);
      case Op::ReduceSum: {
        ReductionDomain d = reduction_domain(src_, n);
        double count = 1;
        for (int64_t x : d.extents) count *= static_cast<double>(x);
        NodeId e = E(arg(0)) >= 0 ? reduce(g_, Op::ReduceSum, E(arg(0)), n.attrs.ints) : -1;
        if (count > 1 && u > 0)
          e = add(e, scale(sum_error_factor(count) * u, reduce(g_, Op::ReduceSum, abs_(val(0)), n.attrs.ints)));
        return e;
      }
      case Op::Einsum: {
        ReductionDomain d = reduction_domain(src_, n);
        double count = 1;
        for (int64_t x : d.extents) count *= static_cast<double>(x);
        const std::string& spec = n.attrs.text;
        NodeId e = -1;
        if (E(arg(0)) >= 0) e = add(e, einsum(g_, spec, E(arg(0)), nonzero_magnitude(val(1))));
        if (E(arg(1)) >= 0) e = add(e, einsum(g_, spec, nonzero_magnitude(val(0)), E(arg(1))));
        if (u > 0) e = add(e, scale((1 + sum_error_factor(count)) * u, einsum(g_, spec, abs_(val(0)), abs_(val(1)))));
        return e;
      }
      case Op::Broadcast:
      case Op::Reshape:
      case Op::Transpose:
      case Op::Slice: {
        if (E(arg(0)) < 0) return -1;
        Node c = n;
        c.type.dtype = DType::F64;
        c.args = {E(arg(0))};
        return g_.make(std::move(c));
      }
      case Op::Concat: {
        bool any = false;
        for (NodeId a : n.args) any |= E(a) >= 0;
        if (!any) return -1;
        std::vector<NodeId> parts;
        for (NodeId a : n.args) parts.push_back(E_or_zero(a));
        return concat(g_, parts, static_cast<int>(n.attrs.ints[0]));
      }
      default:
        AXON_CHECK(false) << "no error bound rule for " << op_name(n.op);
    }
    return -1;
  }

  const Graph& src_;
  const bool with_values_;
  Graph g_;
  std::vector<NodeId> value_, bound_;
};

}  // namespace

Graph error_bound_graph(const Graph& g) { return BoundBuilder(g, /*with_values=*/false).build(); }

namespace {
std::vector<Tensor> evaluate_bound_graph(const Graph& b, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> in64 = inputs;
  for (Tensor& t : in64) t.type.dtype = bound_dtype(t.type.dtype);
  return interpret(b, in64);
}
}  // namespace

std::vector<Tensor> error_bounds(const Graph& g, const std::vector<Tensor>& inputs) {
  return evaluate_bound_graph(error_bound_graph(g), inputs);
}

Graph reference_with_bounds_graph(const Graph& g) { return BoundBuilder(g, /*with_values=*/true).build(); }

ReferenceWithBounds split_reference_with_bounds(const Graph& g, std::vector<Tensor> all) {
  ReferenceWithBounds r;
  const size_t n = g.outputs.size();
  AXON_CHECK(all.size() == 2 * n) << "reference_with_bounds_graph has " << 2 * n << " outputs, got " << all.size();
  for (size_t j = 0; j < n; ++j) {
    r.bounds.push_back(std::move(all[j]));
    Tensor v = std::move(all[n + j]);
    v.type = g[g.outputs[j]].type;  // the values were carried in f64 (bools as bool)
    r.reference.push_back(std::move(v));
  }
  return r;
}

ReferenceWithBounds reference_with_bounds(const Graph& g, const std::vector<Tensor>& inputs) {
  return split_reference_with_bounds(g, evaluate_bound_graph(reference_with_bounds_graph(g), inputs));
}

double element_budget(double bound) { return 2 * bound + std::ldexp(1.0, -126); }

Comparison compare_with_budget(const std::vector<double>& got, const Tensor& ref, const Tensor& bound) {
  Comparison c;
  AXON_CHECK(got.size() == ref.data.size() && bound.data.size() == ref.data.size())
      << "compare sizes " << got.size() << " / " << ref.data.size() << " / " << bound.data.size();
  for (size_t i = 0; i < got.size(); ++i) {
    double r = ref.data[i], x = got[i];
    double budget = element_budget(bound.data[i]);
    if (std::isinf(budget)) ++c.unbounded;
    double ratio;
    double err;
    if (std::isinf(x) && std::isfinite(r) && std::isfinite(budget) && ir::is_float(ref.type.dtype) &&
        ir::cast_to(ref.type.dtype, ir::Real{r + std::copysign(budget, x)}).v == x) {
      // The reference is within budget of a value that rounds to this
      // infinity in the output's dtype: the dtype overflows there, so an
      // infinity of that sign is the rounded answer (exp(89) in float32),
      // no error.
      err = 0;
      ratio = 0;
    } else if (!std::isfinite(r) || !std::isfinite(x)) {
      bool same = (std::isnan(r) && std::isnan(x)) || r == x;
      // A reference whose own bound is infinite or NaN says nothing can be promised.
      bool unbounded = !std::isfinite(bound.data[i]);
      ratio = same || unbounded ? 0 : std::numeric_limits<double>::infinity();
      err = same ? 0 : std::numeric_limits<double>::infinity();
    } else {
      err = std::fabs(x - r);
      // A NaN budget is a gap in the bounds, not a licence: only exact passes.
      ratio = std::isnan(budget) ? (err == 0 ? 0 : std::numeric_limits<double>::infinity()) : err / budget;
    }
    if (ratio > 1) ++c.mismatches;
    if (err > c.max_abs_error) c.max_abs_error = err;
    if (ratio > c.max_error_over_budget || c.worst_index < 0) {
      c.max_error_over_budget = std::max(c.max_error_over_budget, ratio);
      c.worst_index = static_cast<int64_t>(i);
      c.worst_got = x;
      c.worst_ref = r;
      c.worst_budget = budget;
    }
  }
  return c;
}

}  // namespace axon::verify
