// Real: the float64 scalar domain in which the reference interpreters (the
// graph's, verify/interpreter.h, and the tile IR's, tile/interpret.h)
// instantiate element_def.h. Its primitives are the ones element_def.h asks
// for; truth values are 0 and 1.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ir/type.h"

namespace axon::ir {

struct Real {
  double v = 0;
};

inline Real operator+(Real a, Real b) { return {a.v + b.v}; }
inline Real operator-(Real a, Real b) { return {a.v - b.v}; }
inline Real operator*(Real a, Real b) { return {a.v * b.v}; }
inline Real operator/(Real a, Real b) { return {a.v / b.v}; }
inline Real operator-(Real a) { return {-a.v}; }
inline Real exp(Real a) { return {std::exp(a.v)}; }
inline Real log(Real a) { return {std::log(a.v)}; }
inline Real sqrt(Real a) { return {std::sqrt(a.v)}; }
inline Real tanh(Real a) { return {std::tanh(a.v)}; }
inline Real sin(Real a) { return {std::sin(a.v)}; }
inline Real cos(Real a) { return {std::cos(a.v)}; }
inline Real floor(Real a) { return {std::floor(a.v)}; }
inline Real abs_of(Real a) { return {std::fabs(a.v)}; }
inline Real pow_of(Real a, Real b) { return {std::pow(a.v, b.v)}; }
inline Real truth(bool b) { return {b ? 1.0 : 0.0}; }
inline Real lt(Real a, Real b) { return truth(a.v < b.v); }
inline Real le(Real a, Real b) { return truth(a.v <= b.v); }
inline Real gt(Real a, Real b) { return truth(a.v > b.v); }
inline Real ge(Real a, Real b) { return truth(a.v >= b.v); }
inline Real eq(Real a, Real b) { return truth(a.v == b.v); }
inline Real ne(Real a, Real b) { return truth(a.v != b.v); }
inline Real logical_and(Real a, Real b) { return truth(a.v != 0 && b.v != 0); }
inline Real logical_or(Real a, Real b) { return truth(a.v != 0 || b.v != 0); }
inline Real logical_not(Real a) { return truth(a.v == 0); }
inline Real is_nan(Real a) { return truth(std::isnan(a.v)); }
inline Real where(Real c, Real a, Real b) { return c.v != 0 ? a : b; }
inline Real make_scalar(double v, Real) { return {v}; }

/// Rounds a double to the nearest bf16 (ties to even), returned as double.
double round_to_bf16(double x);
/// Rounds a double to the nearest IEEE half (ties to even), returned as double.
double round_to_f16(double x);

inline Real cast_to(DType to, Real a) {
  switch (to) {
    case DType::Bool: return truth(a.v != 0);
    case DType::I32: return {static_cast<double>(static_cast<int32_t>(std::trunc(a.v)))};
    case DType::I64: return {static_cast<double>(static_cast<int64_t>(std::trunc(a.v)))};
    case DType::F16: return {round_to_f16(a.v)};
    case DType::BF16: return {round_to_bf16(a.v)};
    case DType::F32: return {static_cast<double>(static_cast<float>(a.v))};
    case DType::F64: return a;
  }
  return a;
}

}  // namespace axon::ir
