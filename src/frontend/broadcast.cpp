// ArrayBuilder: leaves, casts, broadcasting and elementwise operations.
#include <cmath>

#include "frontend/array_builder.h"

namespace axon::frontend {

using ir::Op;

std::string numpy_shape(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  if (s.size() == 1) out += ",";
  return out + ")";
}

NodeId ArrayBuilder::note(NodeId id, const SourceLoc& at) {
  g_.note_loc(id, at);
  return id;
}

NodeId ArrayBuilder::scalar(double value, DType d, const SourceLoc& at, bool cast) {
  // Float constants keep their exact value: the reference is the real-number
  // meaning, and the error budget charges the kernel for rounding them. An
  // explicit dtype request (np.float32(0.1), dtype=...) rounds, as numpy does.
  return note(ir::constant(g_, ir::is_float(d) && !cast ? value : round_to_dtype(value, d), d), at);
}

NodeId ArrayBuilder::fill(const Shape& s, double value, DType d, const SourceLoc& at, bool cast) {
  return expand_to(scalar(value, d, at, cast), s, at);
}

NodeId ArrayBuilder::iota(const Shape& s, int axis, DType d, const SourceLoc& at) {
  return note(ir::iota(g_, s, axis, d), at);
}

NodeId ArrayBuilder::cast(NodeId x, DType d, const SourceLoc& at) {
  DType from = type(x).dtype;
  // numpy's cast to bool is a test against zero (NaN is true); spell it out.
  if (d == DType::Bool && from != DType::Bool) return ewise(Op::Ne, x, fill(type(x).shape, 0, from, at), at);
  return note(ir::cast(g_, x, d), at);
}

NodeId ArrayBuilder::to_tensor(const Value& v, DType d, const SourceLoc& at, bool cast_value) {
  if (v.is_tensor()) return cast(v.node, d, at);
  AXON_CHECK(v.is_scalar()) << "to_tensor of a non-scalar";
  if (v.kind == ValueKind::Int && ir::is_integer(d)) {
    if (!int_fits(v.i, d))
      fail_at(at, "python integer " + std::to_string(v.i) + " out of bounds for " + numpy_dtype_name(d));
    if (std::abs(static_cast<double>(v.i)) > 9007199254740992.0)
      fail_unsupported_at(at, "integer constant " + std::to_string(v.i) + " is beyond 2**53 and cannot be held exactly");
  }
  return scalar(v.as_double(), d, at, cast_value);
}

DTypeOperand ArrayBuilder::dtype_operand(const Value& v) const {
  switch (v.kind) {
    case ValueKind::Tensor: return DTypeOperand::strong(type(v.node).dtype);
    case ValueKind::Bool: return DTypeOperand::python(ScalarKind::Bool);
    case ValueKind::Int: return DTypeOperand::python(ScalarKind::Int);
    case ValueKind::Float: return DTypeOperand::python(ScalarKind::Float);
    default: break;
  }
  AXON_CHECK(false) << "dtype_operand of a non-numeric value";
  return {};
}

DType ArrayBuilder::result_type(const std::vector<Value>& vs) const {
  std::vector<DTypeOperand> ops;
  for (const Value& v : vs) ops.push_back(dtype_operand(v));
  return frontend::result_type(ops);
}

Shape ArrayBuilder::broadcast_shapes(const std::vector<Value>& vs, const SourceLoc& at) {
  Shape out;
  bool ok = true;
  for (const Value& v : vs) {
    if (!v.is_tensor()) continue;
    const Shape& s = type(v.node).shape;
    if (s.size() > out.size()) out.insert(out.begin(), s.size() - out.size(), 1);
    size_t off = out.size() - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[off + i];
      if (s[i] == o || s[i] == 1) continue;
      if (o == 1) o = s[i];
      else ok = false;
    }
  }
  if (ok) return out;
  std::vector<std::string> names;
  for (const Value& v : vs)
    if (v.is_tensor()) names.push_back(type_of(v.node));
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  fail_at(at, "shapes " + list + " do not broadcast");
}

NodeId ArrayBuilder::expand_to(NodeId x, const Shape& s, const SourceLoc& at) {
  const Shape& in = type(x).shape;
  AXON_CHECK(in.size() <= s.size()) << "expand_to cannot drop axes";
  if (in.size() < s.size()) {
    Shape padded(s.size() - in.size(), 1);
    padded.insert(padded.end(), in.begin(), in.end());
    x = note(ir::reshape(g_, x, padded), at);
  }
  return note(ir::broadcast(g_, x, s), at);
}

NodeId ArrayBuilder::broadcast_to(NodeId x, const Shape& s, const SourceLoc& at) {
  const Shape& in = type(x).shape;
  bool ok = in.size() <= s.size();
  for (size_t i = 0; ok && i < in.size(); ++i) {
    int64_t want = s[s.size() - in.size() + i];
    ok = in[i] == want || in[i] == 1;
  }
  for (int64_t d : s)
    if (d < 0) fail_at(at, "all elements of broadcast shape must be non-negative, got " + numpy_shape(s));
  if (!ok) fail_at(at, "cannot broadcast " + type_of(x) + " to shape " + numpy_shape(s));
  return expand_to(x, s, at);
}

NodeId ArrayBuilder::ewise(Op op, NodeId a, NodeId b, const SourceLoc& at) { return note(ir::binary(g_, op, a, b), at); }

namespace {
Op comparison_op(NpBinary op) {
  switch (op) {
    case NpBinary::Lt: return Op::Lt;
    case NpBinary::Le: return Op::Le;
    case NpBinary::Gt: return Op::Gt;
    case NpBinary::Ge: return Op::Ge;
    case NpBinary::Eq: return Op::Eq;
    default: return Op::Ne;
  }
}
bool is_comparison(NpBinary op) {
  return op == NpBinary::Lt || op == NpBinary::Le || op == NpBinary::Gt || op == NpBinary::Ge ||
         op == NpBinary::Eq || op == NpBinary::Ne;
}
}  // namespace

Value ArrayBuilder::binary(NpBinary op, const Value& a, const Value& b, const SourceLoc& at,
                           const std::string& spelling) {
  AXON_CHECK(a.is_tensor() || b.is_tensor()) << "binary on two scalars should have been folded";
  Shape shape = broadcast_shapes({a, b}, at);
  if (is_comparison(op)) {
    DType dt = result_type({a, b});
    // numpy 2 compares an integer array with an out-of-range Python int exactly.
    for (const Value& v : {a, b})
      if (v.kind == ValueKind::Int && ir::is_integer(dt) && !int_fits(v.i, dt)) dt = DType::I64;
    NodeId x = expand_to(to_tensor(a, dt, at), shape, at);
    NodeId y = expand_to(to_tensor(b, dt, at), shape, at);
    return Value::tensor(ewise(comparison_op(op), x, y, at));
  }
  if (op == NpBinary::LogicalAnd || op == NpBinary::LogicalOr || op == NpBinary::LogicalXor) {
    auto truth = [&](const Value& v) {
      if (!v.is_tensor()) return expand_to(scalar(v.as_double() != 0, DType::Bool, at), shape, at);
      NodeId x = v.node;
      if (type(x).dtype != DType::Bool) x = ewise(Op::Ne, x, fill(type(x).shape, 0, type(x).dtype, at), at);
      return expand_to(x, shape, at);
    };
    NodeId x = truth(a), y = truth(b);
    Op o = op == NpBinary::LogicalAnd ? Op::And : op == NpBinary::LogicalOr ? Op::Or : Op::Ne;
    return Value::tensor(ewise(o, x, y, at));
  }
  if (op == NpBinary::BitAnd || op == NpBinary::BitOr || op == NpBinary::BitXor) {
    DType dt = result_type({a, b});
    if (ir::is_float(dt))
      fail_at(at, "operator " + spelling + " needs bool or integer operands, got " + describe(a, g_) + " and " +
                      describe(b, g_) + "; combine comparisons with np.logical_and/np.logical_or");
    if (dt != DType::Bool)
      fail_unsupported_at(at, "bitwise " + spelling + " on " + numpy_dtype_name(dt) + " arrays is not supported");
    NodeId x = expand_to(to_tensor(a, dt, at), shape, at);
    NodeId y = expand_to(to_tensor(b, dt, at), shape, at);
    Op o = op == NpBinary::BitAnd ? Op::And : op == NpBinary::BitOr ? Op::Or : Op::Ne;
    return Value::tensor(ewise(o, x, y, at));
  }
  return arithmetic(op, a, b, at, spelling);
}

Value ArrayBuilder::arithmetic(NpBinary op, const Value& a, const Value& b, const SourceLoc& at,
                               const std::string& spelling) {
  Shape shape = broadcast_shapes({a, b}, at);
  DType dt = result_type({a, b});
  if (op == NpBinary::FloorDiv || op == NpBinary::Mod)
    fail_unsupported_at(at, "operator " + spelling + " on arrays is not supported (" + describe(a, g_) + ", " +
                                describe(b, g_) + ")");
  if (op == NpBinary::TrueDiv && !ir::is_float(dt)) dt = DType::F64;
  Op o = Op::Add;
  switch (op) {
    case NpBinary::Add: o = dt == DType::Bool ? Op::Or : Op::Add; break;
    case NpBinary::Mul: o = dt == DType::Bool ? Op::And : Op::Mul; break;
    case NpBinary::Maximum: o = dt == DType::Bool ? Op::Or : Op::Maximum; break;
    case NpBinary::Minimum: o = dt == DType::Bool ? Op::And : Op::Minimum; break;
    case NpBinary::TrueDiv: o = Op::Div; break;
    case NpBinary::Sub:
      if (dt == DType::Bool)
        fail_at(at, "numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` "
                    "operator, or the logical_xor function instead");
      o = Op::Sub;
      break;
    default: AXON_CHECK(false) << "not an arithmetic op";
  }
  NodeId x = expand_to(to_tensor(a, dt, at), shape, at);
  NodeId y = expand_to(to_tensor(b, dt, at), shape, at);
  return Value::tensor(ewise(o, x, y, at));
}

Value ArrayBuilder::unary(NpUnary op, const Value& a, const SourceLoc& at, const std::string& spelling) {
  AXON_CHECK(a.is_tensor()) << "unary on a scalar should have been folded";
  NodeId x = a.node;
  DType dt = type(x).dtype;
  auto apply = [&](Op o, NodeId v) { return note(ir::unary(g_, o, v), at); };
  switch (op) {
    case NpUnary::Neg:
      if (dt == DType::Bool)
        fail_at(at, "the numpy boolean negative, the `-` operator, is not supported, use the `~` operator or the "
                    "logical_not function instead");
      return Value::tensor(apply(Op::Neg, x));
    case NpUnary::Pos:
      if (dt == DType::Bool) fail_at(at, spelling + " is not defined for bool arrays");
      return a;
    case NpUnary::Abs:
      return dt == DType::Bool ? a : Value::tensor(apply(Op::Abs, x));
    case NpUnary::Exp: case NpUnary::Log: case NpUnary::Sqrt: case NpUnary::Tanh: case NpUnary::Sin:
    case NpUnary::Cos: {
      Op o = op == NpUnary::Exp ? Op::Exp : op == NpUnary::Log ? Op::Log : op == NpUnary::Sqrt ? Op::Sqrt
             : op == NpUnary::Tanh ? Op::Tanh : op == NpUnary::Sin ? Op::Sin : Op::Cos;
      return Value::tensor(apply(o, cast(x, float_ufunc_dtype(dt), at)));
    }
    case NpUnary::Floor:
    case NpUnary::Ceil:
      if (!ir::is_float(dt)) return a;  // numpy 2 keeps integer and bool dtypes
      if (op == NpUnary::Floor) return Value::tensor(apply(Op::Floor, x));
      return Value::tensor(apply(Op::Neg, apply(Op::Floor, apply(Op::Neg, x))));
    case NpUnary::Square:
      if (dt == DType::Bool) fail_unsupported_at(at, spelling + " of a bool array (numpy returns int8) is not supported");
      return Value::tensor(ewise(Op::Mul, x, x, at));
    case NpUnary::Reciprocal:
      if (!ir::is_float(dt))
        fail_unsupported_at(at, spelling + " of a " + std::string(numpy_dtype_name(dt)) +
                                    " array (integer reciprocal) is not supported");
      return Value::tensor(ewise(Op::Div, fill(type(x).shape, 1, dt, at), x, at));
    case NpUnary::Invert:
      if (dt == DType::Bool) return Value::tensor(apply(Op::Not, x));
      if (ir::is_float(dt))
        fail_at(at, "operator ~ needs a bool or integer array, got " + type_of(x) + "; use np.logical_not");
      fail_unsupported_at(at, "bitwise ~ on " + std::string(numpy_dtype_name(dt)) + " arrays is not supported");
    case NpUnary::LogicalNot:
      if (dt == DType::Bool) return Value::tensor(apply(Op::Not, x));
      return Value::tensor(ewise(Op::Eq, x, fill(type(x).shape, 0, dt, at), at));
  }
  AXON_CHECK(false) << "unhandled unary op";
  return a;
}

Value ArrayBuilder::power(const Value& base, const Value& exponent, const SourceLoc& at) {
  AXON_CHECK(base.is_tensor() && exponent.is_scalar()) << "power needs an array base and a scalar exponent";
  if (type(base.node).dtype == DType::Bool && exponent.is_integral())
    fail_unsupported_at(at, "a bool array to an integer power (numpy computes it in int8) is not supported");
  DType dt = result_type({base, exponent});
  NodeId x = cast(base.node, dt, at);
  const Shape& shape = type(x).shape;
  double e = exponent.as_double();
  bool integral = std::isfinite(e) && e == std::floor(e) && std::fabs(e) <= 1e9;
  if (integral && e < 0 && !ir::is_float(dt)) fail_at(at, "integers to negative integer powers are not allowed");
  if (integral && e == 0) return Value::tensor(fill(shape, 1, dt, at));
  if (integral && e == 1) return Value::tensor(x);
  if (integral && e >= 2 && e <= 4) {
    NodeId x2 = ewise(Op::Mul, x, x, at);
    if (e == 2) return Value::tensor(x2);
    if (e == 3) return Value::tensor(ewise(Op::Mul, x2, x, at));
    return Value::tensor(ewise(Op::Mul, x2, x2, at));
  }
  if (integral && e == -1) return Value::tensor(ewise(Op::Div, fill(shape, 1, dt, at), x, at));
  if (e == 0.5) return Value::tensor(note(ir::unary(g_, Op::Sqrt, x), at));
  return Value::tensor(ewise(Op::Pow, x, fill(shape, e, dt, at), at));
}

Value ArrayBuilder::where(const Value& cond, const Value& a, const Value& b, const SourceLoc& at) {
  Shape shape = broadcast_shapes({cond, a, b}, at);
  NodeId c;
  if (cond.is_tensor()) {
    c = cond.node;
    if (type(c).dtype != DType::Bool) c = ewise(Op::Ne, c, fill(type(c).shape, 0, type(c).dtype, at), at);
  } else {
    c = scalar(cond.as_double() != 0, DType::Bool, at);
  }
  DType dt = result_type({a, b});
  NodeId x = expand_to(to_tensor(a, dt, at), shape, at);
  NodeId y = expand_to(to_tensor(b, dt, at), shape, at);
  return Value::tensor(note(ir::select(g_, expand_to(c, shape, at), x, y), at));
}

}  // namespace axon::frontend
