// loop::describe_stages: each stage in one line, and for a loops stage why
// the specialised generators do not take it (what `axon explain` prints).
#include <gtest/gtest.h>

#include <string>

#include "cpu_test_support.h"
#include "loop/describe.h"
#include "loop/partition.h"

namespace axon {
namespace {

using test::parse;

std::vector<loop::StageDescription> describe(const std::string& body) {
  ir::Graph g = parse("import numpy as np\n\n" + body);
  return loop::describe_stages(g, loop::partition_graph(g));
}

std::string all_why(const loop::StageDescription& d) {
  std::string s;
  for (const std::string& w : d.why) s += w + "\n";
  return s;
}

TEST(loop_describe, AMatrixProductAndARowKernelSayWhatTheyAre) {
  auto d = describe("def f(A: \"f32[64, 32]\", B: \"f32[32, 48]\"):\n    return np.exp(A @ B) * 2.0, A @ B\n");
  ASSERT_GE(d.size(), 2u);
  EXPECT_EQ(d[0].kind, "contraction");
  EXPECT_NE(d[0].what.find("M 64, N 48, K 32"), std::string::npos) << d[0].what;
  // Returned as it is and read by the exp: stored, and the reason said.
  EXPECT_NE(all_why(d[0]).find("is an output of the program"), std::string::npos) << all_why(d[0]);
}

TEST(loop_describe, AProductOnlyReturnedOrTakenAsAnEpilogueNeedsNoReason) {
  auto d = describe("def f(A: \"f32[64, 32]\", B: \"f32[32, 48]\"):\n    return A @ B\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, "contraction");
  EXPECT_TRUE(d[0].why.empty()) << all_why(d[0]);
  d = describe("def f(A: \"f32[64, 32]\", B: \"f32[32, 48]\", b: \"f32[48]\"):\n    return np.maximum(A @ B + b, 0.0)\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, "epilogue");
  EXPECT_TRUE(d[0].why.empty()) << all_why(d[0]);
}

// A product followed by a row reduction (a GEMM then logsumexp over its
// rows) keeps its stage, and says it is the reduction, with its axes.
TEST(loop_describe, AProductStoredForAReductionSaysSo) {
  auto d = describe("def f(x: \"f32[64, 32]\", w: \"f32[32, 48]\", b: \"f32[48]\"):\n"
                    "    y = np.clip(x @ w + b, -10.0, 10.0)\n"
                    "    m = np.max(y, axis=1, keepdims=True)\n"
                    "    return np.log(np.sum(np.exp(y - m), axis=1, keepdims=True)) + m\n");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].kind, "contraction");
  const std::string why = all_why(d[0]);
  EXPECT_NE(why.find("no epilogue: "), std::string::npos) << why;
  EXPECT_NE(why.find("holds a reduce_max over axes [1] of [64, 48]"), std::string::npos) << why;
}

// Read by two stages (a product and its column sum beside an elementwise
// use): an epilogue must be the only reader.
TEST(loop_describe, AProductReadByTwoStagesSaysSo) {
  auto d = describe("def f(A: \"f32[64, 32]\", B: \"f32[32, 48]\"):\n"
                    "    y = A @ B\n"
                    "    return np.exp(y), np.sum(y, axis=0)\n");
  ASSERT_GE(d.size(), 2u);
  EXPECT_EQ(d[0].kind, "contraction");
  EXPECT_NE(all_why(d[0]).find("stages; an epilogue must be its only reader"), std::string::npos) << all_why(d[0]);
}

TEST(loop_describe, ALoopsStageNamesWhyItIsNoRowKernelAndWhyItsProductIsNoGemm) {
  auto d = describe("def f(A: \"f32[64, 32]\", v: \"f32[32]\"):\n    return np.sum(A @ v)\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, "loops");
  EXPECT_NE(all_why(d[0]).find("no row kernel: "), std::string::npos) << all_why(d[0]);
  EXPECT_NE(all_why(d[0]).find("is a matrix-vector product"), std::string::npos) << all_why(d[0]);
}

TEST(loop_describe, AReductionToAScalarAfterRowsIsNoRowKernel) {
  auto d = describe("def f(x: \"f32[64, 32]\"):\n    e = np.exp(x - np.max(x, axis=-1, keepdims=True))\n"
                    "    return np.mean(np.log(np.sum(e, axis=-1)))\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, "loops");
  EXPECT_NE(all_why(d[0]).find("no row kernel: "), std::string::npos) << all_why(d[0]);
}

}  // namespace
}  // namespace axon
