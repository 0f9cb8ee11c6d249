#include "verify/smt/sketch.h"

#include <algorithm>

#include "support/diagnostic.h"

namespace axon::verify::smt {

using namespace axon::ir;

Sketch::Sketch(const std::vector<std::pair<std::string, Shape>>& params) {
  for (const auto& [name, shape] : params) g_.params.push_back({name, {DType::F32, shape}});
  g_.entry = "sketch";
}

Sketch::Id Sketch::in(const std::string& name) {
  for (size_t i = 0; i < g_.params.size(); ++i)
    if (g_.params[i].name == name) return param(g_, static_cast<int>(i));
  AXON_CHECK(false) << "no parameter " << name;
  return -1;
}

Sketch::Id Sketch::scalar(double v) { return constant(g_, v, DType::F32); }

Sketch::Id Sketch::broadcast_to(Id a, const Shape& to) {
  Shape s = shape(a);
  AXON_CHECK(s.size() <= to.size()) << "broadcast to a lower rank";
  if (s.size() < to.size()) {
    Shape padded(to.size() - s.size(), 1);
    padded.insert(padded.end(), s.begin(), s.end());
    a = ir::reshape(g_, a, padded);
    s = padded;
  }
  if (s == to) return a;
  return broadcast(g_, a, to);
}

Sketch::Id Sketch::reshape(Id a, const Shape& to) { return ir::reshape(g_, a, to); }

Sketch::Id Sketch::binary(Op op, Id a, Id b) {
  Shape sa = shape(a), sb = shape(b);
  size_t r = std::max(sa.size(), sb.size());
  Shape out(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - sa.size() ? 1 : sa[i - (r - sa.size())];
    int64_t db = i < r - sb.size() ? 1 : sb[i - (r - sb.size())];
    AXON_CHECK(da == db || da == 1 || db == 1) << "shapes " << shape_str(sa) << " and " << shape_str(sb)
                                                << " do not broadcast";
    out[i] = da == 1 ? db : da;
  }
  return ir::binary(g_, op, broadcast_to(a, out), broadcast_to(b, out));
}

Sketch::Id Sketch::add(Id a, Id b) { return binary(Op::Add, a, b); }
Sketch::Id Sketch::sub(Id a, Id b) { return binary(Op::Sub, a, b); }
Sketch::Id Sketch::mul(Id a, Id b) { return binary(Op::Mul, a, b); }
Sketch::Id Sketch::div(Id a, Id b) { return binary(Op::Div, a, b); }
Sketch::Id Sketch::maximum(Id a, Id b) { return binary(Op::Maximum, a, b); }
Sketch::Id Sketch::neg(Id a) { return unary(g_, Op::Neg, a); }
Sketch::Id Sketch::exp(Id a) { return unary(g_, Op::Exp, a); }
Sketch::Id Sketch::log(Id a) { return unary(g_, Op::Log, a); }
Sketch::Id Sketch::sqrt(Id a) { return unary(g_, Op::Sqrt, a); }
Sketch::Id Sketch::tanh(Id a) { return unary(g_, Op::Tanh, a); }
Sketch::Id Sketch::abs(Id a) { return unary(g_, Op::Abs, a); }

Sketch::Id Sketch::matmul(Id a, Id b) { return ir::einsum(g_, "ij,jk->ik", a, b); }
Sketch::Id Sketch::einsum(const std::string& spec, Id a, Id b) { return ir::einsum(g_, spec, a, b); }

int Sketch::axis_of(Id a, int axis) const {
  int r = static_cast<int>(shape(a).size());
  return axis < 0 ? axis + r : axis;
}

namespace {
Shape keep_dims(Shape s, int axis) {
  s[axis] = 1;
  return s;
}
}  // namespace

Sketch::Id Sketch::sum(Id a, int axis, bool keepdims) {
  axis = axis_of(a, axis);
  Shape s = shape(a);
  Id r = reduce(g_, Op::ReduceSum, a, {axis});
  return keepdims ? ir::reshape(g_, r, keep_dims(s, axis)) : r;
}

Sketch::Id Sketch::max(Id a, int axis, bool keepdims) {
  axis = axis_of(a, axis);
  Shape s = shape(a);
  Id r = reduce(g_, Op::ReduceMax, a, {axis});
  return keepdims ? ir::reshape(g_, r, keep_dims(s, axis)) : r;
}

Sketch::Id Sketch::mean(Id a, int axis, bool keepdims) {
  int64_t n = shape(a)[axis_of(a, axis)];
  return div(sum(a, axis, keepdims), scalar(static_cast<double>(n)));
}

Sketch::Id Sketch::softmax(Id a, int axis) {
  Id e = exp(sub(a, max(a, axis, true)));
  return div(e, sum(e, axis, true));
}

Sketch::Id Sketch::transpose(Id a, const std::vector<int64_t>& perm) { return ir::transpose(g_, a, perm); }

Sketch::Id Sketch::concat(const std::vector<Id>& parts, int axis) {
  return ir::concat(g_, parts, axis_of(parts.at(0), axis));
}

Sketch::Id Sketch::slice(Id a, int axis, int64_t start, int64_t len) {
  axis = axis_of(a, axis);
  Shape s = shape(a);
  std::vector<int64_t> starts(s.size(), 0), steps(s.size(), 1);
  starts[axis] = start;
  s[axis] = len;
  return ir::slice(g_, a, starts, steps, s);
}

RewriteCase rewrite_case(std::string name, std::vector<std::string> dims, ParamsFn params, SideFn lhs, SideFn rhs) {
  RewriteCase c;
  c.name = std::move(name);
  c.dims = std::move(dims);
  c.build = [params, lhs, rhs](const DimSizes& d) {
    Sketch l(params(d)), r(params(d));
    lhs(l, d);
    rhs(r, d);
    return RewritePair{l.graph(), r.graph()};
  };
  return c;
}

}  // namespace axon::verify::smt
