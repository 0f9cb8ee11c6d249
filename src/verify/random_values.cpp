#include "verify/random_values.h"

#include <algorithm>
#include <bit>

namespace axon::verify {

namespace {

constexpr uint64_t kMantissa = 0x000FFFFFFFFFFFFFull, kOne = 0x3FF0000000000000ull;
constexpr double kSqrt2 = 1.4142135623730951, kLn2 = 0.6931471805599453, kQuarterPi = 0.7853981633974483;

// The top 52 bits of w as a fraction in [0, 1).
inline double fraction(uint64_t w) { return std::bit_cast<double>(kOne | (w >> 12)) - 1.0; }

// The top 52 bits of w as (2k + 1) / 2^53, in (0, 1): the subtraction is
// exact, so no value rounds to 0 or 1.
inline double open_unit(uint64_t w) { return std::bit_cast<double>(kOne | (w >> 12)) - 0x1.fffffffffffffp-1; }

// ln u for u in (0, 1] (normal numbers): u = 2^e * m with m in
// [sqrt(1/2), sqrt(2)], ln m = 2 atanh(s) with s = (m - 1) / (m + 1),
// |s| <= 0.1716, whose series to s^19 leaves under 3e-17 relative.
inline double log_of_unit(double u) {
  const uint64_t b = std::bit_cast<uint64_t>(u);
  double m = std::bit_cast<double>((b & kMantissa) | kOne);
  const bool big = m > kSqrt2;
  m = big ? m * 0.5 : m;
  // The biased exponent, plus one when m was halved, as a double: exact.
  const uint64_t biased = (b >> 52) + (big ? 1 : 0);
  const double e = std::bit_cast<double>(0x4330000000000000ull | biased) - (0x1p52 + 1023.0);
  const double s = (m - 1.0) / (m + 1.0), z = s * s;
  double p = 1.0 / 19;
  p = p * z + 1.0 / 17;
  p = p * z + 1.0 / 15;
  p = p * z + 1.0 / 13;
  p = p * z + 1.0 / 11;
  p = p * z + 1.0 / 9;
  p = p * z + 1.0 / 7;
  p = p * z + 1.0 / 5;
  p = p * z + 1.0 / 3;
  p = p * z + 1.0;
  return e * kLn2 + 2.0 * s * p;
}

// sin and cos of phi in [0, pi/4]: Taylor series to phi^15 and phi^16,
// whose first omitted terms are under 5e-17.
inline void sincos_of_octant(double phi, double* s, double* c) {
  const double x = phi * phi;
  double ps = -1.0 / 1307674368000;
  ps = ps * x + 1.0 / 6227020800;
  ps = ps * x - 1.0 / 39916800;
  ps = ps * x + 1.0 / 362880;
  ps = ps * x - 1.0 / 5040;
  ps = ps * x + 1.0 / 120;
  ps = ps * x - 1.0 / 6;
  *s = phi + phi * (x * ps);
  double pc = 1.0 / 20922789888000;
  pc = pc * x - 1.0 / 87178291200;
  pc = pc * x + 1.0 / 479001600;
  pc = pc * x - 1.0 / 3628800;
  pc = pc * x + 1.0 / 40320;
  pc = pc * x - 1.0 / 720;
  pc = pc * x + 1.0 / 24;
  pc = pc * x - 0.5;
  *c = 1.0 + x * pc;
}

// 2^g for g in [0, 1]: sqrt(2) * e^x with x = (g - 1/2) ln 2, |x| <= 0.347,
// by its Taylor series to x^14 (the next term is under 4e-18).
inline double exp2_of_unit(double g) {
  const double x = (g - 0.5) * kLn2;
  double p = 1.0 / 87178291200;
  p = p * x + 1.0 / 6227020800;
  p = p * x + 1.0 / 479001600;
  p = p * x + 1.0 / 39916800;
  p = p * x + 1.0 / 3628800;
  p = p * x + 1.0 / 362880;
  p = p * x + 1.0 / 40320;
  p = p * x + 1.0 / 5040;
  p = p * x + 1.0 / 720;
  p = p * x + 1.0 / 120;
  p = p * x + 1.0 / 24;
  p = p * x + 1.0 / 6;
  p = p * x + 0.5;
  p = p * x + 1.0;
  return kSqrt2 * (1.0 + x * p);
}

// Blocks of this many pairs or values: a few kilobytes on the stack.
constexpr int64_t kBlock = 256;

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define AXON_RANDOM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define AXON_RANDOM_CLONES
#endif

// A full block of pairs: words 2m + 1 and 2m + 2 of pair m = first + j.
AXON_RANDOM_CLONES void normal_block(uint64_t key, int64_t first, double* out) {
  for (int64_t j = 0; j < kBlock; ++j) {
    const uint64_t m = static_cast<uint64_t>(first + j);
    const uint64_t w0 = stream_word(key, 2 * m + 1), w1 = stream_word(key, 2 * m + 2);
    const double r = __builtin_sqrt(-2.0 * log_of_unit(open_unit(w0)));
    double s, c;
    sincos_of_octant(fraction(w1) * kQuarterPi, &s, &c);
    const bool swap = w1 & 1;
    const double x = swap ? s : c, y = swap ? c : s;
    // Negations as sign bits, so that the loop stays free of branches.
    out[2 * j] = std::bit_cast<double>(std::bit_cast<uint64_t>(r * x) ^ ((w1 & 2) << 62));
    out[2 * j + 1] = std::bit_cast<double>(std::bit_cast<uint64_t>(r * y) ^ ((w1 & 4) << 61));
  }
}

AXON_RANDOM_CLONES void wide_range_block(uint64_t key, int64_t first, double* out) {
  for (int64_t j = 0; j < kBlock; ++j) {
    const uint64_t w = stream_word(key, static_cast<uint64_t>(first + j) + 1);
    const double t = 40.0 * fraction(w);  // [0, 40)
    // floor(t) and its value as an integer: t + 2^52 rounds t to the
    // nearest integer, one too many when it rounded up.
    const double rounded = t + 0x1p52;
    const double nearest = rounded - 0x1p52;
    const bool up = nearest > t;
    const double n = up ? nearest - 1.0 : nearest;
    const uint64_t ni = (std::bit_cast<uint64_t>(rounded) & 0x3F) - (up ? 1 : 0);
    const double scale = std::bit_cast<double>((ni + 1023 - 20) << 52);  // 2^(n - 20), exact
    const double v = scale * exp2_of_unit(t - n);
    out[j] = std::bit_cast<double>(std::bit_cast<uint64_t>(v) ^ ((w & 1) << 63));
  }
}

}  // namespace

void normal_values(uint64_t key, int64_t first_pair, int64_t pairs, double* out) {
  double block[2 * kBlock];
  for (int64_t done = 0; done < pairs; done += kBlock) {
    const int64_t n = std::min(kBlock, pairs - done);
    if (n == kBlock) {
      normal_block(key, first_pair + done, out + 2 * done);
    } else {
      normal_block(key, first_pair + done, block);
      std::copy(block, block + 2 * n, out + 2 * done);
    }
  }
}

void wide_range_values(uint64_t key, int64_t first, int64_t n, double* out) {
  double block[kBlock];
  for (int64_t done = 0; done < n; done += kBlock) {
    const int64_t m = std::min(kBlock, n - done);
    if (m == kBlock) {
      wide_range_block(key, first + done, out + done);
    } else {
      wide_range_block(key, first + done, block);
      std::copy(block, block + m, out + done);
    }
  }
}

double unit_log(double u) { return log_of_unit(u); }
void octant_sincos(double phi, double* s, double* c) { sincos_of_octant(phi, s, c); }
double unit_exp2(double g) { return exp2_of_unit(g); }

}  // namespace axon::verify
