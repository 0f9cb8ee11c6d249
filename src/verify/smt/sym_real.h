// SymReal: the scalar type S of element_def.h for the SMT encoding.
//
// A value is either a real term (a Poly in normal form) or a truth value (a
// Cond); element_def.h treats truth as an S, so each converts to the other on
// demand: a condition used as a number is (c ? 1 : 0), a number used as a
// condition is (x != 0). The free functions below are exactly the primitives
// element_def.h lists, found by ADL.
//
// The domain is the reals, so:
//   - is_nan is false: NaN and the infinities are not modelled, and a
//     constant inf or NaN is unsupported (the max of an empty range, too);
//   - division is multiplication by the reciprocal, total, with an unspecified
//     value at zero; identities that need a non-zero divisor are not proved;
//   - exp, log, sqrt, tanh, sin, cos, floor and non-integer powers are
//     uninterpreted functions (axioms in proof_context.h are opt-in);
//   - a cast to f64 is the identity; a cast to another float dtype is an
//     uninterpreted rounding function of that dtype, and a cast to an integer
//     dtype an uninterpreted truncation, so both sides must round alike.
#pragma once

#include "ir/type.h"
#include "verify/smt/normal_form.h"

namespace axon::verify::smt {

class SymReal {
 public:
  SymReal();  // 0
  explicit SymReal(PolyRef p) : poly_(std::move(p)) {}
  explicit SymReal(CondRef c) : cond_(std::move(c)) {}
  bool is_truth() const { return cond_ != nullptr; }
  PolyRef poly() const;
  CondRef cond() const;

 private:
  PolyRef poly_;
  CondRef cond_;
};

SymReal operator+(const SymReal& a, const SymReal& b);
SymReal operator-(const SymReal& a, const SymReal& b);
SymReal operator*(const SymReal& a, const SymReal& b);
SymReal operator/(const SymReal& a, const SymReal& b);
SymReal operator-(const SymReal& a);
SymReal exp(const SymReal& a);
SymReal log(const SymReal& a);
SymReal sqrt(const SymReal& a);
SymReal tanh(const SymReal& a);
SymReal sin(const SymReal& a);
SymReal cos(const SymReal& a);
SymReal floor(const SymReal& a);
SymReal abs_of(const SymReal& a);
SymReal pow_of(const SymReal& a, const SymReal& b);
SymReal lt(const SymReal& a, const SymReal& b);
SymReal le(const SymReal& a, const SymReal& b);
SymReal gt(const SymReal& a, const SymReal& b);
SymReal ge(const SymReal& a, const SymReal& b);
SymReal eq(const SymReal& a, const SymReal& b);
SymReal ne(const SymReal& a, const SymReal& b);
SymReal logical_and(const SymReal& a, const SymReal& b);
SymReal logical_or(const SymReal& a, const SymReal& b);
SymReal logical_not(const SymReal& a);
SymReal is_nan(const SymReal& a);
SymReal where(const SymReal& c, const SymReal& a, const SymReal& b);
SymReal cast_to(ir::DType to, const SymReal& a);
/// A constant; an integer that decodes to a sum of symbolic sizes is that sum.
SymReal make_scalar(double value, const SymReal& like);

}  // namespace axon::verify::smt
