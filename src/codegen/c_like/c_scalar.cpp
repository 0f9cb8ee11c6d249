#include "codegen/c_like/c_scalar.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "codegen/c_like/float16_helpers.h"
#include "support/diagnostic.h"

namespace axon::codegen {

using ir::DType;

namespace {

bool in_float(DType d) { return d == DType::F32 || d == DType::F16 || d == DType::BF16; }
bool is_int(DType d) { return d == DType::I32 || d == DType::I64 || d == DType::Bool; }

// The shortest decimal that reads back as `v` in float (or double), with the
// suffix that makes C read it in that type. Negative values are parenthesised
// so that "-" never meets another "-".
std::string float_literal(double v, bool as_float) {
  if (std::isnan(v)) return as_float ? "NAN" : "(double)NAN";
  if (std::isinf(v)) {
    const char* inf = as_float ? "INFINITY" : "(double)INFINITY";
    return v > 0 ? inf : std::string("(-") + inf + ")";
  }
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    bool same = as_float ? std::strtof(buf, nullptr) == static_cast<float>(v) : std::strtod(buf, nullptr) == v;
    if (same) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (as_float) s += "f";
  return std::signbit(v) ? "(" + s + ")" : s;
}

std::string int_literal(double v, DType d) {
  const bool i32 = d == DType::I32;
  if (std::isnan(v)) return "0";
  // Integers have no infinities: the identities of max and min become the extremes.
  const double lo = i32 ? -2147483648.0 : -9223372036854775808.0;
  const double hi = i32 ? 2147483647.0 : 9223372036854775807.0;
  if (v <= lo) return i32 ? "INT32_MIN" : "INT64_MIN";
  if (v >= hi) return i32 ? "INT32_MAX" : "INT64_MAX";
  long long n = static_cast<long long>(std::trunc(v));
  std::string s = std::to_string(n);
  if (!i32) s = "(int64_t)" + (n < 0 ? "(" + s + ")" : s);
  else if (n < 0) s = "(" + s + ")";
  return s;
}

CScalar unary_call(const char* f32_name, const char* f64_name, const CScalar& a) {
  DType d = a.dtype();
  if (d == DType::F64) return {std::string(f64_name) + "(" + a.expr() + ")", d};
  if (in_float(d)) return {std::string(f32_name) + "(" + a.expr() + ")", d};
  // Integers and bool: through double, truncated back.
  return {std::string("(") + compute_c_type(d) + ")" + f64_name + "((double)" + a.expr() + ")", d};
}

CScalar binary_op(const char* op, const CScalar& a, const CScalar& b, DType result) {
  return {"(" + a.expr() + " " + op + " " + b.expr() + ")", result};
}

bool literal_truth(const CScalar& a, bool* value) {
  if (!a.is_literal()) return false;
  *value = a.literal_value() != 0;
  return true;
}

}  // namespace

const char* compute_c_type(DType d) { return in_float(d) ? "float" : ir::dtype_c_type(d); }

CScalar CScalar::literal(double value, DType dtype) {
  CScalar s;
  s.dtype_ = dtype;
  s.is_literal_ = true;
  switch (dtype) {
    case DType::Bool: {
      // As for the integers, infinities clamp to the ends of the range: the
      // identity of max over bools is false. Everything else is x != 0.
      bool t = std::isinf(value) ? value > 0 : value != 0;
      s.value_ = t ? 1 : 0;
      s.expr_ = t ? "true" : "false";
      break;
    }
    case DType::I32:
    case DType::I64:
      s.expr_ = int_literal(value, dtype);
      s.value_ = std::isnan(value) ? 0 : std::trunc(value);
      break;
    case DType::F16: s.value_ = round_to_f16(value); s.expr_ = float_literal(s.value_, true); break;
    case DType::BF16: s.value_ = round_to_bf16(value); s.expr_ = float_literal(s.value_, true); break;
    case DType::F32: s.value_ = static_cast<float>(value); s.expr_ = float_literal(s.value_, true); break;
    case DType::F64: s.value_ = value; s.expr_ = float_literal(value, false); break;
  }
  return s;
}

std::string load_conversion(DType d, const std::string& elem) {
  if (d == DType::F16) return "axon_f16_to_f32(" + elem + ")";
  if (d == DType::BF16) return "axon_bf16_to_f32(" + elem + ")";
  return elem;
}

std::string store_conversion(DType d, const std::string& value) {
  if (d == DType::F16) return "axon_f32_to_f16(" + value + ")";
  if (d == DType::BF16) return "axon_f32_to_bf16(" + value + ")";
  return value;
}

CScalar operator+(const CScalar& a, const CScalar& b) { return binary_op("+", a, b, a.dtype()); }
CScalar operator-(const CScalar& a, const CScalar& b) { return binary_op("-", a, b, a.dtype()); }
CScalar operator*(const CScalar& a, const CScalar& b) { return binary_op("*", a, b, a.dtype()); }
CScalar operator/(const CScalar& a, const CScalar& b) { return binary_op("/", a, b, a.dtype()); }
CScalar operator-(const CScalar& a) { return {"(-" + a.expr() + ")", a.dtype()}; }

CScalar exp(const CScalar& a) { return unary_call("expf", "exp", a); }
CScalar log(const CScalar& a) { return unary_call("logf", "log", a); }
CScalar sqrt(const CScalar& a) { return unary_call("sqrtf", "sqrt", a); }
CScalar tanh(const CScalar& a) { return unary_call("tanhf", "tanh", a); }
CScalar sin(const CScalar& a) { return unary_call("sinf", "sin", a); }
CScalar cos(const CScalar& a) { return unary_call("cosf", "cos", a); }

CScalar floor(const CScalar& a) {
  if (is_int(a.dtype())) return a;  // already integral
  return unary_call("floorf", "floor", a);
}

CScalar abs_of(const CScalar& a) {
  if (a.dtype() == DType::Bool) return a;
  if (is_int(a.dtype())) return {"(" + a.expr() + " < 0 ? -" + a.expr() + " : " + a.expr() + ")", a.dtype()};
  return unary_call("fabsf", "fabs", a);
}

CScalar pow_of(const CScalar& a, const CScalar& b) {
  DType d = a.dtype();
  // A literal small integer exponent becomes multiplies. x**0, x**1, x**2 and
  // x**-1 are exact (one rounding, as pow itself); x**3 and x**4 round twice.
  if (b.is_literal()) {
    double e = b.literal_value();
    if (e == 0) return make_scalar(1.0, a);
    if (e == 1) return a;
    if (e == 2) return a * a;
    if (e == 3) return a * a * a;
    if (e == 4) return (a * a) * (a * a);
    if (e == -1 && !is_int(d)) return make_scalar(1.0, a) / a;
  }
  if (d == DType::F64) return {"pow(" + a.expr() + ", " + b.expr() + ")", d};
  if (in_float(d)) return {"powf(" + a.expr() + ", " + b.expr() + ")", d};
  return {std::string("(") + compute_c_type(d) + ")pow((double)" + a.expr() + ", (double)" + b.expr() + ")", d};
}

CScalar lt(const CScalar& a, const CScalar& b) { return binary_op("<", a, b, DType::Bool); }
CScalar le(const CScalar& a, const CScalar& b) { return binary_op("<=", a, b, DType::Bool); }
CScalar gt(const CScalar& a, const CScalar& b) { return binary_op(">", a, b, DType::Bool); }
CScalar ge(const CScalar& a, const CScalar& b) { return binary_op(">=", a, b, DType::Bool); }
CScalar eq(const CScalar& a, const CScalar& b) { return binary_op("==", a, b, DType::Bool); }
CScalar ne(const CScalar& a, const CScalar& b) { return binary_op("!=", a, b, DType::Bool); }

// The logical primitives fold literal truth values, so that e.g. the NaN test
// of an integer maximum disappears instead of printing "(false || ...)".
CScalar logical_and(const CScalar& a, const CScalar& b) {
  bool t;
  if (literal_truth(a, &t)) return t ? cast_to(DType::Bool, b) : CScalar::literal(0, DType::Bool);
  if (literal_truth(b, &t)) return t ? cast_to(DType::Bool, a) : CScalar::literal(0, DType::Bool);
  return binary_op("&&", a, b, DType::Bool);
}
CScalar logical_or(const CScalar& a, const CScalar& b) {
  bool t;
  if (literal_truth(a, &t)) return t ? CScalar::literal(1, DType::Bool) : cast_to(DType::Bool, b);
  if (literal_truth(b, &t)) return t ? CScalar::literal(1, DType::Bool) : cast_to(DType::Bool, a);
  return binary_op("||", a, b, DType::Bool);
}
CScalar logical_not(const CScalar& a) {
  bool t;
  if (literal_truth(a, &t)) return CScalar::literal(t ? 0 : 1, DType::Bool);
  return {"(!" + a.expr() + ")", DType::Bool};
}
CScalar is_nan(const CScalar& a) {
  if (!ir::is_float(a.dtype())) return CScalar::literal(0, DType::Bool);
  if (a.is_literal()) return CScalar::literal(std::isnan(a.literal_value()) ? 1 : 0, DType::Bool);
  return {"std::isnan(" + a.expr() + ")", DType::Bool};
}
CScalar where(const CScalar& c, const CScalar& a, const CScalar& b) {
  bool t;
  if (literal_truth(c, &t)) return t ? a : b;
  return {"(" + c.expr() + " ? " + a.expr() + " : " + b.expr() + ")", a.dtype()};
}

CScalar cast_to(DType to, const CScalar& a) {
  const DType from = a.dtype();
  if (from == to) return a;
  if (a.is_literal()) {
    double v = a.literal_value();
    return CScalar::literal(to == DType::Bool ? (v != 0 ? 1.0 : 0.0) : v, to);
  }
  const std::string& x = a.expr();
  switch (to) {
    case DType::Bool: return {"(" + x + " != 0)", to};
    case DType::I32: return {"(int32_t)" + x, to};
    case DType::I64: return {"(int64_t)" + x, to};
    case DType::F32:
      if (in_float(from)) return {x, to};  // f16 and bf16 values are floats already
      return {"(float)" + x, to};
    case DType::F64: return {"(double)" + x, to};
    case DType::F16:
    case DType::BF16: {
      const char* round = to == DType::F16 ? "axon_round_f16(" : "axon_round_bf16(";
      if (in_float(from)) return {round + x + ")", to};
      // From double (or an integer, exact in double up to 2^53) via float
      // rounded to odd, so that the value is rounded once.
      std::string d = from == DType::F64 ? x : "(double)" + x;
      return {round + std::string("axon_f64_to_f32_odd(") + d + "))", to};
    }
  }
  AXON_CHECK(false) << "cast to an unknown dtype";
  return a;
}

CScalar make_scalar(double value, const CScalar& like) { return CScalar::literal(value, like.dtype()); }

}  // namespace axon::codegen
