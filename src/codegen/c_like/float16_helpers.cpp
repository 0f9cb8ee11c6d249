#include "codegen/c_like/float16_helpers.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace axon::codegen {

// Rounding from double goes through float rounded to odd: with at least two
// more bits than the target (24 against 11 and 8), rounding that float to
// nearest equals one direct rounding of the double, so no value is rounded
// twice the wrong way.
const char* float16_helpers_source() {
  return R"(// ---- f16 / bf16: stored as uint16_t bits, computed in float ----
// Every conversion rounds to nearest, ties to even; NaN stays a (quiet) NaN.
[[maybe_unused]] static inline float axon_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {  // zero or subnormal: m * 2^-24, exact in float
    float f = (float)m * 5.9604644775390625e-8f;
    return sign ? -f : f;
  }
  uint32_t bits = e == 31 ? (sign | 0x7f800000u | (m << 13)) : (sign | ((e + 112u) << 23) | (m << 13));
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
[[maybe_unused]] static inline uint16_t axon_f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);   // NaN
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  // |f| >= 65520 rounds to inf
  if (ax < 0x38800000u) {  // below 2^-14: a multiple of 2^-24 (subnormal) or zero
    float a;
    std::memcpy(&a, &ax, 4);
    return (uint16_t)(sign | (uint16_t)std::nearbyint(a * 16777216.0f));
  }
  uint32_t m = ax - 0x38000000u;    // rebias the exponent from 127 to 15
  m += 0x0fffu + ((m >> 13) & 1u);  // drop 13 mantissa bits, ties to even
  return (uint16_t)(sign | (m >> 13));
}
[[maybe_unused]] static inline float axon_bf16_to_f32(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
[[maybe_unused]] static inline uint16_t axon_f32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);  // NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}
[[maybe_unused]] static inline float axon_round_f16(float f) { return axon_f16_to_f32(axon_f32_to_f16(f)); }
[[maybe_unused]] static inline float axon_round_bf16(float f) { return axon_bf16_to_f32(axon_f32_to_bf16(f)); }
// double -> float rounded to odd; rounding the result to f16 or bf16 then
// equals one direct rounding of the double (float keeps >= 2 extra bits).
[[maybe_unused]] static inline float axon_f64_to_f32_odd(double d) {
  float f = (float)d;
  if ((double)f == d || d != d) return f;
  if (std::fabs((double)f) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  b |= 1u;
  std::memcpy(&f, &b, 4);
  return f;
}
)";
}

namespace {
float to_odd_float(double d) {
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d || std::isnan(d)) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  b |= 1u;
  std::memcpy(&f, &b, 4);
  return f;
}
}  // namespace

double round_to_f16(double x) {
  if (std::isnan(x)) return x;
  // Scale so that one f16 unit in the last place is 1, round, scale back.
  double ax = std::fabs(to_odd_float(x));
  if (ax >= 65520.0) return std::copysign(INFINITY, x);
  int e;
  std::frexp(ax, &e);                    // ax in [2^(e-1), 2^e)
  int exp_ulp = std::max(e - 11, -24);   // 11 significant bits, subnormals below 2^-14
  double r = std::ldexp(std::nearbyint(std::ldexp(ax, -exp_ulp)), exp_ulp);
  return std::copysign(r, x);
}

double round_to_bf16(double x) {
  if (std::isnan(x)) return x;
  float f = to_odd_float(x);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  b += 0x7fffu + ((b >> 16) & 1u);
  b &= 0xffff0000u;
  std::memcpy(&f, &b, 4);
  return f;
}

}  // namespace axon::codegen
