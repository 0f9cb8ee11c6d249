// CScalar: the scalar type S of element_def.h for code generators that print
// C++. A CScalar is the text of an expression plus the dtype whose value it
// holds; the free functions below are exactly the primitives element_def.h
// asks for (found by ADL), each printing the C++ that computes it.
//
// Compute types: f32 in float (expf, sqrtf, ...), f64 in double, bool, i32 and
// i64 as their C types; f16 and bf16 values are held in float (their buffers
// store uint16_t bits, converted by the helpers in float16_helpers.h) and are
// rounded when stored or cast. Integer maps without a C operator (exp, log,
// pow with a non-literal exponent, ...) go through double and truncate back.
//
// Literals print exactly: the shortest decimal that reads back as the same
// float or double, INFINITY and NAN for the rest. Integers and bool have no
// infinities: a literal +-inf clamps to the end of their range, so that max
// over i32 starts from INT32_MIN and max over bool from false.
#pragma once

#include <string>

#include "ir/type.h"

namespace axon::codegen {

/// The C type a value of `d` is computed in ("float" for f16 and bf16).
const char* compute_c_type(ir::DType d);

class CScalar {
 public:
  CScalar() = default;
  /// `expr` must already be in compute_c_type(dtype).
  CScalar(std::string expr, ir::DType dtype) : expr_(std::move(expr)), dtype_(dtype) {}
  /// The literal `value` rounded into `dtype`.
  static CScalar literal(double value, ir::DType dtype);

  const std::string& expr() const { return expr_; }
  ir::DType dtype() const { return dtype_; }
  bool is_literal() const { return is_literal_; }
  /// The literal's value after rounding into dtype(); only when is_literal().
  double literal_value() const { return value_; }

 private:
  std::string expr_ = "0";
  ir::DType dtype_ = ir::DType::F32;
  bool is_literal_ = false;
  double value_ = 0;
};

/// The C++ text that turns a stored element `elem` of `d` into its compute type,
/// and back.
std::string load_conversion(ir::DType d, const std::string& elem);
std::string store_conversion(ir::DType d, const std::string& value);

// ---- the primitives of element_def.h ----
CScalar operator+(const CScalar& a, const CScalar& b);
CScalar operator-(const CScalar& a, const CScalar& b);
CScalar operator*(const CScalar& a, const CScalar& b);
CScalar operator/(const CScalar& a, const CScalar& b);
CScalar operator-(const CScalar& a);
CScalar exp(const CScalar& a);
CScalar log(const CScalar& a);
CScalar sqrt(const CScalar& a);
CScalar tanh(const CScalar& a);
CScalar sin(const CScalar& a);
CScalar cos(const CScalar& a);
CScalar floor(const CScalar& a);
CScalar abs_of(const CScalar& a);
CScalar pow_of(const CScalar& a, const CScalar& b);
CScalar lt(const CScalar& a, const CScalar& b);
CScalar le(const CScalar& a, const CScalar& b);
CScalar gt(const CScalar& a, const CScalar& b);
CScalar ge(const CScalar& a, const CScalar& b);
CScalar eq(const CScalar& a, const CScalar& b);
CScalar ne(const CScalar& a, const CScalar& b);
CScalar logical_and(const CScalar& a, const CScalar& b);
CScalar logical_or(const CScalar& a, const CScalar& b);
CScalar logical_not(const CScalar& a);
CScalar is_nan(const CScalar& a);
CScalar where(const CScalar& c, const CScalar& a, const CScalar& b);
CScalar cast_to(ir::DType to, const CScalar& a);
CScalar make_scalar(double value, const CScalar& like);

}  // namespace axon::codegen
