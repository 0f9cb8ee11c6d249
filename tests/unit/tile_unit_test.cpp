// print_tile_unit (codegen/c_like/tile_cpp.h): several tile programs in one
// translation unit, each in its own namespace with its own micro-kernels,
// the shared helpers once, and an entry that allocates the values between
// them, calls them in order and copies an output no kernel wrote. Printed
// text and a compiled run against the float64 product.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "codegen/c_like/kernel_abi.h"
#include "codegen/c_like/tile_cpp.h"
#include "codegen/cpu/gemm.h"
#include "codegen/cpu/stage_knobs.h"
#include "cpu_test_support.h"
#include "runtime/compile_shared.h"
#include "runtime/loaded_kernel.h"

namespace axon {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// (A . B) . B for A: [M, K], B: [K, K], as two GEMM programs with the same
// register tile; the entry's second output is a copy of the first.
TEST(tile_unit, KernelsInTheirNamespacesCalledInOrder) {
  const int64_t M = 13, K = 32;
  ir::Graph g = test::parse("import numpy as np\n\ndef f(A: \"f32[13, 32]\", B: \"f32[32, 32]\"):\n"
                            "    C = (A @ B) @ B\n    return C, C\n");
  const target::Target& t = test::host();
  const codegen::GemmShape shape = codegen::dense_gemm_shape(1, M, K, K);
  const codegen::GemmSchedule gs = codegen::default_gemm_schedule(shape, t);
  ASSERT_EQ(codegen::gemm_why_illegal(shape, gs, t), "");
  const codegen::KernelAbi abi = codegen::make_kernel_abi(g);
  ASSERT_EQ(abi.output_names.size(), 2u);
  codegen::UnitKernel first{tile::lower_gemm(shape, gs, "gemm"), "first", "the first product", codegen::tile_printer_options(t),
                            {abi.param_names[0], abi.param_names[1], "T"}};
  codegen::UnitKernel second{tile::lower_gemm(shape, gs, "gemm"), "second", "the second product",
                             codegen::tile_printer_options(t), {"T", abi.param_names[1], abi.output_names[0]}};
  const codegen::KernelSource ks = codegen::print_tile_unit(
      abi, {first, second}, {{"T", ir::DType::F32, M * K}}, {{abi.output_names[1], abi.output_names[0], M * K * 4}},
      "a test unit");
  const std::string& src = ks.source;
  EXPECT_EQ(count(src, "namespace first {"), 1u) << src;
  EXPECT_EQ(count(src, "namespace second {"), 1u) << src;
  // Each namespace defines the micro-kernel its Matmuls call; the includes are once, at file scope.
  const size_t micro = count(src, "__attribute__((noinline)) static void axon_mm");
  EXPECT_EQ(micro % 2, 0u) << src;
  EXPECT_GE(micro, 2u) << src;
  EXPECT_EQ(count(src, "#include <cmath>"), 1u) << src;
  const size_t call1 = src.find("first::run(A, B, T);"), call2 = src.find("second::run(T, B, out0);");
  ASSERT_NE(call1, std::string::npos) << src;
  ASSERT_NE(call2, std::string::npos) << src;
  EXPECT_LT(call1, call2);
  EXPECT_LT(src.find("axon_alloc(" + std::to_string(M * K * 4) + ")"), call1) << src;
  EXPECT_GT(src.find("std::memcpy(out1, out0, " + std::to_string(M * K * 4) + ");"), call2) << src;
  EXPECT_GT(src.find("std::free(T);"), call2) << src;
  EXPECT_EQ(src.find("extern \"C\""), src.rfind("extern \"C\"")) << "one entry";

  runtime::CompileOptions co;
  co.flags = codegen::cpu_compile_flags(t, true);
  runtime::LoadedKernel kernel(runtime::compile_shared(ks, co), ks.entry);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> A(static_cast<size_t>(M * K)), B(static_cast<size_t>(K * K)), C1(A.size()), C2(A.size());
  for (float& x : A) x = u(rng);
  for (float& x : B) x = u(rng);
  kernel.call({A.data(), B.data(), C1.data(), C2.data()});
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < K; ++n) {
      double want = 0;
      for (int64_t l = 0; l < K; ++l) {
        double ab = 0;
        for (int64_t j = 0; j < K; ++j) ab += double(A[size_t(m * K + j)]) * B[size_t(j * K + l)];
        want += ab * B[size_t(l * K + n)];
      }
      ASSERT_NEAR(C1[size_t(m * K + n)], want, 1e-3 * (1 + std::fabs(want))) << m << ", " << n;
      ASSERT_EQ(C1[size_t(m * K + n)], C2[size_t(m * K + n)]) << m << ", " << n;
    }
}

}  // namespace
}  // namespace axon
