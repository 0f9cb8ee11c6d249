// The random inputs (verify/inputs.h, verify/random_values.h): the
// generator's own logarithm, sine, cosine and 2^x against libm; each
// distribution's statistics (normal: mean, variance, kurtosis, tails, the
// Kolmogorov-Smirnov distance, independent pairs, a uniform angle; the
// others' ranges and frequencies); values exactly representable in their
// dtype, bytes equal to to_buffer of them; the same values for any split of
// the work, and pinned bits for one seed, so that a platform or compiler
// that computes them differently fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "frontend/spec.h"
#include "gate/hashing.h"
#include "ir/real.h"
#include "verify/inputs.h"
#include "verify/kernel_io.h"
#include "verify/random_values.h"

namespace axon {
namespace {

double ulp_error(double got, double want) { return std::fabs(got - want) / (std::nextafter(std::fabs(want), INFINITY) - std::fabs(want)); }

TEST(random_inputs, OwnMathMatchesLibm) {
  double worst_log = 0, worst_sin = 0, worst_cos = 0, worst_exp2 = 0;
  std::vector<double> us = {0x1p-53, 0x1p-52 + 0x1p-53, 0.25, 0.5, 0.7071067811865475, 0.7071067811865477,
                            0.9999999, 1 - 0x1p-53, 1.0};
  for (int i = 1; i < 200000; ++i) us.push_back(std::ldexp(1.0 + (i % 1000) / 1000.0, -(i % 54)) * 0.5);
  for (double u : us) {
    if (u <= 0 || u > 1) continue;
    const double want = std::log(u);
    if (want == 0) {
      EXPECT_EQ(verify::unit_log(u), 0.0);
      continue;
    }
    worst_log = std::max(worst_log, ulp_error(verify::unit_log(u), want));
  }
  for (int i = 0; i <= 200000; ++i) {
    const double phi = 0.7853981633974483 * i / 200000, g = i / 200000.0;
    double s, c;
    verify::octant_sincos(phi, &s, &c);
    if (phi > 0) worst_sin = std::max(worst_sin, ulp_error(s, std::sin(phi)));
    worst_cos = std::max(worst_cos, ulp_error(c, std::cos(phi)));
    worst_exp2 = std::max(worst_exp2, ulp_error(verify::unit_exp2(g), std::exp2(g)));
  }
  EXPECT_LE(worst_log, 4) << "ulp";
  EXPECT_LE(worst_sin, 4) << "ulp";
  EXPECT_LE(worst_cos, 4) << "ulp";
  EXPECT_LE(worst_exp2, 4) << "ulp";
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

TEST(random_inputs, NormalValuesAreStandardNormal) {
  const int64_t n = int64_t{1} << 20;
  std::vector<double> z(static_cast<size_t>(n));
  verify::normal_values(0x1234567ull, 0, n / 2, z.data());
  double mean = 0, m2 = 0, m4 = 0, pair_corr = 0, next_corr = 0;
  int64_t over2 = 0, over3 = 0, over4 = 0, positive = 0;
  for (int64_t i = 0; i < n; ++i) mean += z[static_cast<size_t>(i)];
  mean /= static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) {
    const double x = z[static_cast<size_t>(i)];
    m2 += (x - mean) * (x - mean);
    m4 += std::pow(x - mean, 4);
    over2 += std::fabs(x) > 2;
    over3 += std::fabs(x) > 3;
    over4 += std::fabs(x) > 4;
    positive += x > 0;
    if (i % 2 == 0) pair_corr += x * z[static_cast<size_t>(i + 1)];
    if (i % 2 == 1 && i + 1 < n) next_corr += x * z[static_cast<size_t>(i + 1)];
  }
  const double var = m2 / static_cast<double>(n), kurtosis = m4 / static_cast<double>(n) / (var * var);
  const double sn = std::sqrt(static_cast<double>(n));
  EXPECT_LT(std::fabs(mean), 5 / sn);
  EXPECT_LT(std::fabs(var - 1), 5 * std::sqrt(2.0) / sn);
  EXPECT_LT(std::fabs(kurtosis - 3), 5 * std::sqrt(24.0) / sn);
  EXPECT_LT(std::fabs(pair_corr / static_cast<double>(n / 2)), 5 / std::sqrt(n / 2.0));  // the two values of a pair
  EXPECT_LT(std::fabs(next_corr / static_cast<double>(n / 2)), 5 / std::sqrt(n / 2.0));  // one pair and the next
  EXPECT_LT(std::fabs(static_cast<double>(positive) / static_cast<double>(n) - 0.5), 5 * 0.5 / sn);
  // Tails: P(|z| > k) = erfc(k / sqrt 2), within five binomial deviations.
  for (auto [count, k] : {std::pair{over2, 2.0}, {over3, 3.0}, {over4, 4.0}}) {
    const double p = std::erfc(k / std::sqrt(2.0));
    EXPECT_NEAR(static_cast<double>(count) / static_cast<double>(n), p, 5 * std::sqrt(p * (1 - p) / static_cast<double>(n)))
        << "|z| > " << k;
  }
  // Kolmogorov-Smirnov distance to the normal CDF: 1.95 / sqrt(n) is its
  // 0.1% critical value.
  std::vector<double> sorted = z;
  std::sort(sorted.begin(), sorted.end());
  double ks = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double f = normal_cdf(sorted[static_cast<size_t>(i)]);
    ks = std::max({ks, std::fabs(f - static_cast<double>(i) / static_cast<double>(n)),
                   std::fabs(f - static_cast<double>(i + 1) / static_cast<double>(n))});
  }
  EXPECT_LT(ks, 1.95 / sn);
  // The angle of each pair is uniform: each eighth of the circle, and each
  // of 64 sectors, holds its share.
  std::vector<int64_t> sector(64, 0);
  for (int64_t m = 0; m < n / 2; ++m) {
    const double a = std::atan2(z[static_cast<size_t>(2 * m + 1)], z[static_cast<size_t>(2 * m)]);
    ++sector[static_cast<size_t>(std::min(63.0, std::floor((a + M_PI) / (2 * M_PI) * 64)))];
  }
  const double expected = n / 2 / 64.0;
  for (int64_t c : sector) EXPECT_NEAR(static_cast<double>(c), expected, 5 * std::sqrt(expected));
}

// Any split of a stream gives the same values: the threads that draw them
// cannot change them.
TEST(random_inputs, StreamsDoNotDependOnTheSplit) {
  std::vector<double> whole(2000), parts(2000);
  verify::normal_values(99, 0, 1000, whole.data());
  verify::normal_values(99, 0, 300, parts.data());
  verify::normal_values(99, 300, 700, parts.data() + 600);
  EXPECT_EQ(whole, parts);
  std::vector<double> wide(1000), wide_parts(1000);
  verify::wide_range_values(5, 0, 1000, wide.data());
  verify::wide_range_values(5, 0, 257, wide_parts.data());
  verify::wide_range_values(5, 257, 743, wide_parts.data() + 257);
  EXPECT_EQ(wide, wide_parts);
  std::vector<double> other(2000);
  verify::normal_values(100, 0, 1000, other.data());
  EXPECT_NE(whole, other);
}

// The bits of one seed's values, pinned: the generator uses only operations
// IEEE 754 rounds the same way everywhere, so a change here is a change of
// the inputs every replay of an old seed would see.
TEST(random_inputs, PinnedBitsForOneSeed) {
  std::vector<double> z(4096), w(4096);
  verify::normal_values(2024, 0, 2048, z.data());
  verify::wide_range_values(2024, 0, 4096, w.data());
  EXPECT_EQ(gate::hex64(gate::fast_fingerprint(z.data(), z.size() * 8)), "ab053a2cb6f10ef6");
  EXPECT_EQ(gate::hex64(gate::fast_fingerprint(w.data(), w.size() * 8)), "70d0e775c1f7a7d2");
}

constexpr const char* kSpec = R"(import numpy as np

def f(x: "f32[4099]", y: "f64[4099]", h: "f16[2001]", b: "bf16[2001]", i: "i32[3001]", m: "bool[3001]"):
    return x
)";

struct Stats {
  double mean = 0, var = 0, min = INFINITY, max = -INFINITY;
};
Stats stats(const std::vector<double>& v) {
  Stats s;
  for (double x : v) {
    s.mean += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.var += (x - s.mean) * (x - s.mean);
  s.var /= static_cast<double>(v.size());
  return s;
}

// Every distribution in every dtype: the values are representable in it,
// the bytes are to_buffer of them, and the values follow the distribution's
// documented meaning.
TEST(random_inputs, DistributionsInEveryDtype) {
  frontend::Spec spec = frontend::parse_spec("random_inputs_test.py", kSpec, {});
  const ir::Graph& g = spec.graph;
  ASSERT_EQ(g.params.size(), 6u);
  using verify::Distribution;
  struct Case {
    Distribution d;
    double scale, offset;
    double mean, sd;  // of the floating-point values, before rounding
  };
  const Case cases[] = {{Distribution::Normal, 1, 0, 0, 1},       {Distribution::ShiftedMean, 1, 0, 3, 1},
                        {Distribution::Large, 1, 0, 0, 100},      {Distribution::Tiny, 1, 0, 0, 1e-30},
                        {Distribution::Normal, 1e-4, 0, 0, 1e-4}, {Distribution::Normal, 1, 1000, 1000, 1},
                        {Distribution::WideRange, 1, 0, 0, -1},   {Distribution::Ties, 1, 0, 0, -1}};
  for (const Case& c : cases) {
    const std::string name = std::string(verify::distribution_name(c.d)) + " x " + std::to_string(c.scale) + " + " +
                             std::to_string(c.offset);
    std::vector<std::vector<uint8_t>> bytes;
    std::vector<ir::Tensor> in = verify::random_inputs(g, 77, verify::Draw{c.d, c.scale, c.offset}, &bytes);
    ASSERT_EQ(in.size(), 6u);
    ASSERT_EQ(bytes.size(), 6u);
    const std::vector<ir::Tensor> again = verify::random_inputs(g, 77, verify::Draw{c.d, c.scale, c.offset});
    for (size_t p = 0; p < 6; ++p) EXPECT_EQ(in[p].data, again[p].data) << name << " parameter " << p;
    for (size_t p = 0; p < 6; ++p) {
      const ir::Type& t = g.params[p].type;
      ASSERT_EQ(in[p].data.size(), static_cast<size_t>(t.numel()));
      EXPECT_EQ(bytes[p], verify::to_buffer(in[p], t.dtype)) << name << " parameter " << p;
      for (double v : in[p].data) ASSERT_EQ(ir::cast_to(t.dtype, ir::Real{v}).v, v) << name << " parameter " << p;
    }
    // Parameters of the same shape are different streams.
    EXPECT_NE(in[2].data, in[3].data) << name;
    // Integers and bools do not follow the distribution.
    for (double v : in[4].data) ASSERT_TRUE(v >= -8 && v <= 8 && v == std::trunc(v));
    for (double v : in[5].data) ASSERT_TRUE(v == 0 || v == 1);
    EXPECT_NEAR(stats(in[5].data).mean, 0.5, 0.05);
    const std::vector<double>& x = in[1].data;  // f64: the values as drawn
    const Stats s = stats(x);
    const double sn = std::sqrt(static_cast<double>(x.size()));
    if (c.sd > 0) {
      EXPECT_NEAR(s.mean, c.mean, 5 * c.sd / sn + std::fabs(c.mean) * 1e-15) << name;
      EXPECT_NEAR(std::sqrt(s.var), c.sd, 5 * c.sd / sn) << name;
      EXPECT_LT(s.max - s.min, 17 * c.sd) << name;
      EXPECT_NEAR(stats(in[0].data).mean, c.mean, 5 * c.sd / sn + std::fabs(c.mean) * 1e-6) << name;
    } else if (c.d == Distribution::WideRange) {
      // log2 |v| uniform in [-20, 20): each unit interval holds a 40th.
      std::map<int, int> bins;
      int negative = 0;
      for (double v : x) {
        ASSERT_GE(std::fabs(v), 0x1p-20) << name;
        ASSERT_LE(std::fabs(v), 0x1p20) << name;
        ++bins[static_cast<int>(std::floor(std::log2(std::fabs(v))))];
        negative += v < 0;
      }
      EXPECT_NEAR(negative, x.size() / 2.0, 5 * sn / 2) << name;
      ASSERT_EQ(bins.size(), 40u) << name;
      const double share = static_cast<double>(x.size()) / 40;
      for (auto [k, count] : bins) EXPECT_NEAR(count, share, 5 * std::sqrt(share)) << name << " 2^" << k;
    } else {  // ties: -2 .. 2, each a fifth
      std::map<double, int> counts;
      for (double v : x) ++counts[v];
      ASSERT_EQ(counts.size(), 5u) << name;
      for (auto [v, count] : counts) {
        EXPECT_TRUE(v >= -2 && v <= 2) << v;
        EXPECT_NEAR(count, x.size() / 5.0, 5 * std::sqrt(x.size() * 0.16)) << name << " value " << v;
      }
    }
  }
}

}  // namespace
}  // namespace axon
