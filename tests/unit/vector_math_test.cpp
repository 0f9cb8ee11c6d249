// The vector math of generated CPU kernels (codegen/cpu/vector_math.h):
// a strided sweep of every function on every ISA against the float64 libm,
// held to the documented bounds, plus exact special values. The full
// sweep over all 2^32 inputs is tools/vecmath_exhaustive.cpp.
#include "codegen/cpu/vector_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <cstring>
#include <limits>
#include <thread>

#include "runtime/compile_shared.h"
#include "runtime/loaded_kernel.h"

namespace axon::codegen {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

const runtime::LoadedKernel& sweep_kernel(int bits) {
  static std::map<int, runtime::LoadedKernel> cache;
  auto it = cache.find(bits);
  if (it == cache.end()) {
    runtime::CompileOptions o;
    o.flags = vector_math_flags(bits);
    it = cache.emplace(bits, runtime::LoadedKernel(runtime::compile_shared(vector_math_sweep_kernel(bits), o),
                                                   "axon_vm_apply"))
             .first;
  }
  return it->second;
}

std::vector<float> apply(int bits, int fn, const std::vector<float>& in) {
  std::vector<float> out(in.size());
  int32_t f = fn;
  int64_t n = static_cast<int64_t>(in.size());
  sweep_kernel(bits).call({&f, const_cast<float*>(in.data()), out.data(), &n});
  return out;
}

// Every 97th bit pattern, the special values, and 2^13 neighbours on either
// side of each point where an algorithm switches branch or the result
// changes regime (overflow, subnormal, saturation).
std::vector<float> sweep_inputs() {
  std::vector<float> in;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 97) in.push_back(from_bits(static_cast<uint32_t>(u)));
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()})
    in.push_back(v);
  for (float c : {1.0f, 0.625f, 3.95f, 9.5f, 88.7228394f, 88.8f, -87.3365479f, -103.972084f, -104.0f,
                  0x1p-126f, 0.70710678f, 1.41421356f, 2.0f, 0.5f, 1e-4f,
                  // exp2: overflow, subnormal and zero thresholds, the clamp, the
                  // table's 1/32 steps, the end of the rounding constant's binade
                  128.0f, 129.0f, -126.0f, -149.0f, -150.0f, -151.0f, 0.03125f, 0.09375f, 0x1p18f, 0x1p19f,
                  // where AVX2's exp and exp2 leave their fast path
                  86.0f, 125.0f}) {
    for (float s : {c, -c}) {
      uint32_t b = to_bits(s);
      for (uint32_t d = 0; d < (1u << 13); ++d) {
        in.push_back(from_bits(b + d));
        in.push_back(from_bits(b - d));
      }
    }
  }
  return in;
}

const std::vector<float>& inputs() {
  static const std::vector<float> in = sweep_inputs();
  return in;
}

struct Worst {
  double ulp = 0;
  float x = 0, got = 0;
  double exact = 0;
};

bool has_avx512() { return __builtin_cpu_supports("avx512f"); }
bool has_avx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

// The ISAs this CPU runs (the scalar kernel is built with -mfma).
std::vector<int> isas() {
  std::vector<int> v;
  if (has_avx512()) v.push_back(512);
  if (has_avx2()) v.insert(v.end(), {256, 0});
  return v;
}

// One function on every ISA, in chunks: the float64 reference once per
// chunk, then each ISA's output against it, on two threads.
void check_function(const std::string& name) {
  const auto& names = vector_math_functions();
  int fn = static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
  ASSERT_LT(fn, static_cast<int>(names.size()));
  if (!has_avx2()) GTEST_SKIP() << "[SKIP] this CPU has no avx2+fma";
  const std::vector<float>& all = inputs();
  std::vector<int> bits = isas();
  std::vector<Worst> worst(bits.size());
  constexpr size_t kChunk = 1 << 20;
  std::vector<double> exact(kChunk);
  for (size_t start = 0; start < all.size(); start += kChunk) {
    std::vector<float> in(all.begin() + start, all.begin() + std::min(all.size(), start + kChunk));
    auto ref = [&](size_t t) {
      for (size_t i = t; i < in.size(); i += 2) exact[i] = vector_math_reference(fn, in[i]);
    };
    std::thread th(ref, 1);
    ref(0);
    th.join();
    for (size_t k = 0; k < bits.size(); ++k) {
      std::vector<float> out = apply(bits[k], fn, in);
      Worst w[2];
      auto cmp = [&](size_t t) {
        for (size_t i = t; i < in.size(); i += 2) {
          double e = ulp_error(out[i], exact[i]);
          if (e > w[t].ulp) w[t] = {e, in[i], out[i], exact[i]};
        }
      };
      std::thread tc(cmp, 1);
      cmp(0);
      tc.join();
      for (const Worst& x : w)
        if (x.ulp > worst[k].ulp) worst[k] = x;
    }
  }
  double bound = vector_math_accuracy()[fn].max_ulp;
  for (size_t k = 0; k < bits.size(); ++k) {
    const Worst& w = worst[k];
    EXPECT_LE(w.ulp, bound) << name << " (vector_bits " << bits[k] << ") at x = " << std::hexfloat << w.x
                            << ": got " << w.got << ", exact " << w.exact;
  }
}

TEST(vector_math, accuracyTableNamesTheFunctionsInOrder) {
  ASSERT_EQ(vector_math_accuracy().size(), vector_math_functions().size());
  for (size_t i = 0; i < vector_math_functions().size(); ++i)
    EXPECT_EQ(vector_math_accuracy()[i].name, vector_math_functions()[i]);
}

TEST(vector_math, sourceUsesOnlyTheRequestedIsa) {
  std::string s0 = vector_math_source(0), s256 = vector_math_source(256), s512 = vector_math_source(512);
  EXPECT_EQ(s0.find("_mm"), std::string::npos);
  EXPECT_EQ(s256.find("_mm512"), std::string::npos);
  EXPECT_NE(s256.find("__m256 axon_verf(__m256"), std::string::npos);
  EXPECT_NE(s512.find("__m512 axon_vexp(__m512"), std::string::npos);
  EXPECT_NE(s512.find("__m256 axon_vtanh(__m256"), std::string::npos);
  for (const char* n : {"exp", "log", "tanh", "sigmoid", "sqrt", "rsqrt", "erf", "exp2"})
    EXPECT_NE(s0.find(std::string("float axon_v") + n + "(float"), std::string::npos) << n;
  EXPECT_THROW(vector_math_source(128), std::exception);
}

// The emitter may paste the text more than once into a kernel, for
// different widths; the guards keep that one definition.
TEST(vector_math, pastingTwiceCompiles) {
  if (!has_avx512()) GTEST_SKIP() << "[SKIP] this CPU has no avx512f";
  KernelSource k = vector_math_sweep_kernel(512);
  k.source = "#include <immintrin.h>\n#include <cmath>\n#include <cstdint>\n" + vector_math_source(256) +
             vector_math_source(0) + k.source;
  runtime::CompileOptions o;
  o.flags = vector_math_flags(512);
  runtime::LoadedKernel kernel(runtime::compile_shared(k, o), "axon_vm_apply");
  std::vector<float> in(40, 1.0f), out(40);
  int32_t fn = 0;
  int64_t n = 40;
  kernel.call({&fn, in.data(), out.data(), &n});
  EXPECT_EQ(out[0], out[39]);
  EXPECT_NEAR(out[0], 2.718281828, 1e-6);
}

// A strided sweep per function, all ISAs: every 97th float32 bit pattern
// and the boundary regions of sweep_inputs().
TEST(vector_math, strided_exp) { check_function("exp"); }
TEST(vector_math, strided_log) { check_function("log"); }
TEST(vector_math, strided_tanh) { check_function("tanh"); }
TEST(vector_math, strided_sigmoid) { check_function("sigmoid"); }
TEST(vector_math, strided_sqrt) { check_function("sqrt"); }
TEST(vector_math, strided_rsqrt) { check_function("rsqrt"); }
TEST(vector_math, strided_erf) { check_function("erf"); }
TEST(vector_math, strided_exp2) { check_function("exp2"); }

// Inputs where rounding to an integer can go either way: x within 512 ulps
// of (k + 1/2) ln 2 for every k of exp's range (where x log2 e is nearest a
// half-integer, so n rounded from the product fl(x log2 e) and n rounded
// from the exact x log2 e can differ by one), and t within 64 ulps of the
// midpoints of exp2's 1/16 grid.
std::vector<float> near_ties() {
  std::vector<float> v;
  for (int k = -151; k <= 128; ++k) {
    uint32_t b = to_bits(static_cast<float>((k + 0.5) * 0.69314718055994530942));
    for (uint32_t d = 0; d < 512; ++d) v.push_back(from_bits(b + d)), v.push_back(from_bits(b - d));
  }
  for (int j = -151 * 16; j <= 129 * 16; j += 7) {
    uint32_t b = to_bits(static_cast<float>((j + 0.5) / 16.0));
    for (uint32_t d = 0; d < 64; ++d) v.push_back(from_bits(b + d)), v.push_back(from_bits(b - d));
  }
  return v;
}

// Every function but rsqrt (whose estimate is the ISA's own: rsqrt14 on
// AVX-512) runs the same IEEE operations on every ISA (exp2 included: reduce
// and no clamp on AVX-512DQ, a clamp elsewhere), so it must give the same
// bits; a compiler that fused a multiply and an add on one ISA only
// (contraction, or an algorithm that rounds a product differently) breaks
// this at the near-ties.
TEST(vector_math, sameBitsOnEveryIsa) {
  std::vector<int> bits = isas();
  if (bits.size() < 2) GTEST_SKIP() << "[SKIP] one ISA only";
  std::vector<float> in = near_ties();
  for (size_t i = 0; i < inputs().size(); i += 7) in.push_back(inputs()[i]);
  const auto& names = vector_math_functions();
  for (const std::string& name : names) {
    if (name == "rsqrt") continue;
    int fn = static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
    std::vector<float> first = apply(bits[0], fn, in);
    for (size_t k = 1; k < bits.size(); ++k) {
      std::vector<float> out = apply(bits[k], fn, in);
      size_t differ = 0, where = 0;
      for (size_t i = 0; i < in.size(); ++i)
        if (to_bits(out[i]) != to_bits(first[i]) && !(std::isnan(out[i]) && std::isnan(first[i]))) where = i, ++differ;
      EXPECT_EQ(differ, 0u) << name << ": vector_bits " << bits[k] << " against " << bits[0] << ", e.g. at x = "
                            << std::hexfloat << in[where] << ": " << out[where] << " and " << first[where];
    }
  }
}

// AVX2's exp and exp2 take a fast path when every lane of a vector is in
// range (|x| <= 86, |t| <= 125) and the general one otherwise: the same
// value must give the same bits either way. Each value v goes in twice, as
// a vector of eight v (fast path when v is in range) and as seven v and a
// NaN (general path); lanes 0-6 of the two are compared.
TEST(vector_math, avx2FastPathGivesTheGeneralPathsBits) {
  if (!has_avx2()) GTEST_SKIP() << "[SKIP] this CPU has no avx2+fma";
  std::vector<float> values;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 9973) values.push_back(from_bits(static_cast<uint32_t>(u)));
  for (float c : {0.0f, 1.0f, 86.0f, 125.0f, 0x1p-126f})
    for (float s : {c, -c})
      for (uint32_t d = 0; d < (1u << 12); ++d) values.push_back(from_bits(to_bits(s) + d)), values.push_back(from_bits(to_bits(s) - d));
  for (float v : near_ties()) values.push_back(v);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> in;
  for (float v : values) {
    for (int i = 0; i < 8; ++i) in.push_back(v);
    for (int i = 0; i < 7; ++i) in.push_back(v);
    in.push_back(nan);
  }
  const auto& names = vector_math_functions();
  for (const char* name : {"exp", "exp2", "sigmoid", "tanh"}) {
    int fn = static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
    std::vector<float> out = apply(256, fn, in);
    size_t differ = 0, where = 0, fast = 0;
    for (size_t b = 0; b < in.size(); b += 16) {
      fast += std::fabs(in[b]) <= 86.0f;
      for (size_t i = 0; i < 7; ++i)
        if (to_bits(out[b + i]) != to_bits(out[b + 8 + i]) && !(std::isnan(out[b + i]) && std::isnan(out[b + 8 + i])))
          where = b + i, ++differ;
    }
    EXPECT_GT(fast, values.size() / 10) << "too few values in the fast path's range to test it";
    EXPECT_EQ(differ, 0u) << name << " at x = " << std::hexfloat << in[where] << ": " << out[where]
                          << " on the fast path, " << out[where + 8] << " on the general one";
  }
}

// Special values, exactly, on every ISA.
TEST(vector_math, specialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    const char* fn;
    float x, want;  // want NaN: any NaN
  };
  const Case cases[] = {
      {"exp", inf, inf},       {"exp", -inf, 0},        {"exp", 89.0f, inf},      {"exp", -104.0f, 0},
      {"exp", nan, nan},       {"exp", 0, 1},           {"exp", -103.0f, 0x1p-149f},  // subnormal, not flushed
      {"log", 0, -inf},        {"log", -0.0f, -inf},    {"log", -1, nan},         {"log", inf, inf},
      {"log", -inf, nan},      {"log", nan, nan},       {"log", 1, 0},
      {"tanh", 0, 0},          {"tanh", -0.0f, -0.0f},  {"tanh", 1e30f, 1},       {"tanh", -inf, -1},
      {"tanh", nan, nan},      {"sigmoid", inf, 1},     {"sigmoid", -inf, 0},     {"sigmoid", 1e30f, 1},
      {"sigmoid", -1e30f, 0},  {"sigmoid", nan, nan},   {"sigmoid", 0, 0.5f},     {"sqrt", -1, nan},
      {"sqrt", -0.0f, -0.0f},  {"sqrt", inf, inf},      {"sqrt", 4, 2},           {"rsqrt", 0, inf},
      {"rsqrt", -0.0f, -inf},  {"rsqrt", inf, 0},       {"rsqrt", -1, nan},       {"rsqrt", nan, nan},
      {"rsqrt", 4, 0.5f},      {"erf", inf, 1},         {"erf", -inf, -1},        {"erf", 10, 1},
      {"erf", nan, nan},       {"erf", -0.0f, -0.0f},
      {"exp2", inf, inf},      {"exp2", -inf, 0},       {"exp2", nan, nan},       {"exp2", 0, 1},
      {"exp2", 10, 1024},      {"exp2", -1, 0.5f},      {"exp2", 128, inf},       {"exp2", 1e30f, inf},
      {"exp2", -1e30f, 0},     {"exp2", -149, 0x1p-149f}, {"exp2", -150, 0},      {"exp2", -126, 0x1p-126f},
      {"exp2", 127, 0x1p127f}, {"exp2", -0x1p18f, 0},   {"exp2", 0x1p19f, inf},
  };
  const auto& names = vector_math_functions();
  for (int bits : isas()) {
    for (const Case& c : cases) {
      int fn = static_cast<int>(std::find(names.begin(), names.end(), c.fn) - names.begin());
      // 17 copies: the vector body and the scalar tail both see the value.
      std::vector<float> out = apply(bits, fn, std::vector<float>(17, c.x));
      for (size_t i : {size_t{0}, size_t{16}}) {
        if (std::isnan(c.want)) {
          EXPECT_TRUE(std::isnan(out[i])) << c.fn << "(" << c.x << ") = " << out[i] << ", vector_bits " << bits;
        } else {
          EXPECT_EQ(to_bits(out[i]), to_bits(c.want))
              << c.fn << "(" << std::hexfloat << c.x << ") = " << out[i] << ", want " << c.want << ", vector_bits " << bits;
        }
      }
    }
  }
}

}  // namespace
}  // namespace axon::codegen
