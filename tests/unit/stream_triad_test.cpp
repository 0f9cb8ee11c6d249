// The bench's bandwidth yardstick (codegen/cpu/stream_triad.h): the emitted
// triad computes a = b + 3 c on every element of [0, n) and no other, for
// the host, its AVX2 restriction and a scalar description, with a length
// that is not a multiple of the vector width and split unevenly by the
// threads; and the probe and the bench agree on its length.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <vector>

#include "codegen/cpu/emit_cpu.h"
#include "codegen/cpu/stream_triad.h"
#include "cpu_test_support.h"
#include "runtime/compile_shared.h"

namespace axon {
namespace {

using Triad = void (*)(float*, const float*, const float*, int64_t);

void expect_triad(const target::Target& t, int64_t n, const std::string& what) {
  ASSERT_TRUE(test::kGompPinned);
  codegen::KernelSource k = codegen::stream_triad_kernel(t);
  runtime::CompileOptions co;
  co.flags = codegen::cpu_compile_flags(t, true);
  std::string so = runtime::compile_shared(k, co);
  void* lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto triad = reinterpret_cast<Triad>(dlsym(lib, codegen::kStreamTriadEntry));
  ASSERT_NE(triad, nullptr) << what;
  const int64_t guard = 16;
  std::vector<float> a(n + guard, NAN), b(n + guard), c(n + guard);
  for (int64_t i = 0; i < n + guard; ++i) b[i] = 0.5f * static_cast<float>(i), c[i] = 1.0f - static_cast<float>(i);
  triad(a.data(), b.data(), c.data(), n);
  int bad = 0;
  for (int64_t i = 0; i < n && bad < 5; ++i)
    if (a[i] != b[i] + 3.0f * c[i]) ADD_FAILURE() << what << ": a[" << i << "] = " << a[i] << ", want " << b[i] + 3.0f * c[i], ++bad;
  for (int64_t i = n; i < n + guard; ++i) EXPECT_TRUE(std::isnan(a[i])) << what << ": wrote a[" << i << "] past n = " << n;
  dlclose(lib);
}

TEST(stream_triad, computesEveryElementOnEveryDescription) {
  std::vector<target::Target> ts = test::targets();
  target::Target scalar = test::host();
  scalar.isa = target::Isa{};
  ts.push_back(scalar);
  for (target::Target t : ts)
    for (int cores : {1, 3}) {
      t.cores = cores;
      std::string what = "vector bits " + std::to_string(t.isa.vector_bits()) + ", " + std::to_string(cores) + " threads";
      for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{1003}}) expect_triad(t, n, what + ", n " + std::to_string(n));
    }
}

TEST(stream_triad, emitsVectorsOnlyWhereTheDescriptionHasThem) {
  target::Target t = test::host();
  t.isa = target::Isa{};
  EXPECT_EQ(codegen::stream_triad_kernel(t).source.find("_mm256"), std::string::npos);
  t.isa.avx2 = t.isa.fma = true;
  EXPECT_NE(codegen::stream_triad_kernel(t).source.find("_mm256_loadu_ps"), std::string::npos);
  t.cores = 5;
  EXPECT_NE(codegen::stream_triad_kernel(t).source.find("num_threads(5)"), std::string::npos);
}

TEST(stream_triad, lengthIsAThirdOfTheColdWorkingSet) {
  const target::Target& t = test::host();
  const double triad_bytes = 3.0 * 4.0 * static_cast<double>(target::stream_triad_elements(t));
  EXPECT_LE(triad_bytes, target::cold_rotation_bytes(t));
  EXPECT_GT(triad_bytes, target::cold_rotation_bytes(t) - 12);
}

}  // namespace
}  // namespace axon
