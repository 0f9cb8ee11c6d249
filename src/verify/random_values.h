// Random values from counter-based streams, with the same bits on every
// platform and for any split of the work: element i of a stream depends only
// on the stream's key and i.
//
// Words: splitmix64, word k (k >= 1) of the stream that starts at `key` is
// splitmix64's k-th output, mix(key + k * golden_gamma).
// Normal values: Box-Muller using both values of each pair. Pair m (elements
// 2m and 2m + 1) takes words 2m + 1 and 2m + 2: the first gives
// u in (0, 1) and the radius sqrt(-2 ln u), the second an angle phi uniform
// in [0, pi/4) (its top 52 bits) and one of the eight symmetries of the
// square (its low 3 bits: swap the two coordinates, negate either), so that
// (cos phi, sin phi) under the symmetry is uniform on the circle.
// Wide-range values: element i takes word i + 1: a sign (bit 0) and
// 2^(-20 + t), t = 40 x (top 52 bits as a fraction), uniform in [-20, 20).
//
// The logarithm, sine, cosine and 2^x are axon's own (series in basic IEEE
// operations: +, -, *, /, sqrt and exact conversions, each rounded the same
// way everywhere; random_values.cpp is compiled with -ffp-contract=off so
// that no platform fuses them), accurate to a few units in the last place.
// The block loops have no branches, so that they vectorise; on x86-64 an
// AVX2 version is chosen at run time, with the same results.
#pragma once

#include <cstdint>

namespace axon::verify {

/// Word k (k >= 1) of the stream that starts at `key`.
inline uint64_t stream_word(uint64_t key, uint64_t k) {
  uint64_t z = key + k * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// out[j] = standard normal element 2 * first_pair + j of stream `key`,
/// for j < 2 * pairs.
void normal_values(uint64_t key, int64_t first_pair, int64_t pairs, double* out);

/// out[j] = wide-range element first + j of stream `key`, for j < n.
void wide_range_values(uint64_t key, int64_t first, int64_t n, double* out);

/// The functions the blocks use, one value at a time (for their tests).
double unit_log(double u);                          // ln u, u in (0, 1]
void octant_sincos(double phi, double* s, double* c);  // phi in [0, pi/4]
double unit_exp2(double g);                         // 2^g, g in [0, 1]

}  // namespace axon::verify
