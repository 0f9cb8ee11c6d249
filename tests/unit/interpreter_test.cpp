// The reference interpreter on hand-checked values, and the error budget.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/spec.h"
#include "ir/graph.h"
#include "verify/error_budget.h"
#include "verify/inputs.h"
#include "verify/interpreter.h"
#include "ir/real.h"

using namespace axon::ir;
using axon::ir::Tensor;

namespace {
Tensor t(Shape s, std::vector<double> v) { return Tensor{Type{DType::F32, s}, v}; }
}  // namespace

TEST(interpreter, MatmulByHand) {
  Graph g;
  g.params = {{"a", {DType::F32, {2, 3}}}, {"b", {DType::F32, {3, 2}}}};
  g.outputs = {einsum(g, "ij,jk->ik", param(g, 0), param(g, 1))};
  auto out = axon::verify::interpret(g, {t({2, 3}, {1, 2, 3, 4, 5, 6}), t({3, 2}, {7, 8, 9, 10, 11, 12})});
  EXPECT_EQ(out[0].data, (std::vector<double>{58, 64, 139, 154}));
}

TEST(interpreter, EinsumDiagonalAndScalarOutput) {
  Graph g;
  g.params = {{"a", {DType::F32, {2, 2}}}, {"v", {DType::F32, {2}}}};
  NodeId d = einsum(g, "ii,i->i", param(g, 0), param(g, 1));
  NodeId s = einsum(g, "i,i->", param(g, 1), param(g, 1));
  g.outputs = {d, s};
  auto out = axon::verify::interpret(g, {t({2, 2}, {1, 2, 3, 4}), t({2}, {5, 6})});
  EXPECT_EQ(out[0].data, (std::vector<double>{5, 24}));
  EXPECT_EQ(out[1].data, (std::vector<double>{61}));
}

TEST(interpreter, MaxPropagatesNaNAndEmptyIsMinusInf) {
  Graph g;
  g.params = {{"a", {DType::F32, {2, 2}}}, {"e", {DType::F32, {2, 0}}}};
  g.outputs = {reduce(g, Op::ReduceMax, param(g, 0), {1}), reduce(g, Op::ReduceMax, param(g, 1), {1})};
  auto out = axon::verify::interpret(g, {t({2, 2}, {1, NAN, -3, 2}), t({2, 0}, {})});
  EXPECT_TRUE(std::isnan(out[0].data[0]));
  EXPECT_EQ(out[0].data[1], 2);
  EXPECT_EQ(out[1].data, (std::vector<double>{-INFINITY, -INFINITY}));
}

TEST(interpreter, LayoutOps) {
  Graph g;
  g.params = {{"a", {DType::F32, {2, 3}}}};
  NodeId a = param(g, 0);
  NodeId tr = transpose(g, a, {1, 0});
  NodeId sl = slice(g, a, {1, 2}, {-1, -2}, {2, 2});  // a[::-1, ::-2]
  NodeId rs = reshape(g, tr, {6});
  NodeId cc = concat(g, {a, a}, 0);
  NodeId io = iota(g, {2, 3}, 1, DType::I64);
  g.outputs = {tr, sl, rs, cc, io};
  auto out = axon::verify::interpret(g, {t({2, 3}, {0, 1, 2, 3, 4, 5})});
  EXPECT_EQ(out[0].data, (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(out[1].data, (std::vector<double>{5, 3, 2, 0}));
  EXPECT_EQ(out[2].data, (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(out[3].data, (std::vector<double>{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(out[4].data, (std::vector<double>{0, 1, 2, 0, 1, 2}));
}

TEST(interpreter, CastRoundsToDestination) {
  Graph g;
  g.params = {{"a", {DType::F64, {3}}}};
  NodeId a = param(g, 0);
  g.outputs = {cast(g, a, DType::F32), cast(g, a, DType::I32), cast(g, a, DType::Bool)};
  auto out = axon::verify::interpret(g, {Tensor{Type{DType::F64, {3}}, {0.1, -2.7, 0.0}}});
  EXPECT_EQ(out[0].data[0], static_cast<double>(0.1f));
  EXPECT_EQ(out[1].data, (std::vector<double>{0, -2, 0}));
  EXPECT_EQ(out[2].data, (std::vector<double>{1, 1, 0}));
}

TEST(error_budget, SumBoundGrowsWithLengthAndMagnitude) {
  Graph g;
  g.params = {{"a", {DType::F32, {1, 1000}}}};
  g.outputs = {reduce(g, Op::ReduceSum, param(g, 0), {1})};
  Tensor in = t({1, 1000}, std::vector<double>(1000, 2.0));
  auto bound = axon::verify::error_bounds(g, {in});
  // g(n) u sum|t| with u = 2^-24, n = 1000, g(n) = 8 sqrt(n), sum|t| = 2000.
  EXPECT_DOUBLE_EQ(bound[0].data[0], 8 * std::sqrt(1000.0) * std::ldexp(1.0, -24) * 2000);
  Tensor small = t({1, 1000}, std::vector<double>(1000, 0.0));
  small.data[0] = 1;
  small.data[1] = 1;
  EXPECT_DOUBLE_EQ(axon::verify::error_bounds(g, {small})[0].data[0], 8 * std::sqrt(1000.0) * std::ldexp(1.0, -24) * 2);
}

TEST(error_budget, DroppedTermIsOverBudgetAndReorderedSumIsNot) {
  Graph g;
  g.params = {{"a", {DType::F32, {1, 4096}}}};
  g.outputs = {reduce(g, Op::ReduceSum, param(g, 0), {1})};
  std::vector<double> v(4096);
  for (int i = 0; i < 4096; ++i) v[i] = std::sin(i * 0.37) * 10;
  Tensor in = t({1, 4096}, v);
  auto ref = axon::verify::interpret(g, {in});
  auto bound = axon::verify::error_bounds(g, {in});
  float fwd = 0, bwd = 0;
  for (int i = 0; i < 4096; ++i) fwd += static_cast<float>(v[i]);
  for (int i = 4095; i >= 0; --i) bwd += static_cast<float>(v[i]);
  EXPECT_TRUE(axon::verify::compare_with_budget({fwd}, ref[0], bound[0]).ok());
  EXPECT_TRUE(axon::verify::compare_with_budget({bwd}, ref[0], bound[0]).ok());
  int big = 0;
  for (int i = 0; i < 4096; ++i)
    if (std::fabs(v[i]) > std::fabs(v[big])) big = i;
  float dropped = fwd - static_cast<float>(v[big]);  // a loop that skipped one term
  EXPECT_FALSE(axon::verify::compare_with_budget({dropped}, ref[0], bound[0]).ok());
}

// sqrt(sum(x * x)) of x = 1e-28: every product underflows to 0 in float32
// (numpy's float32 answer is 0 too) while the reference is 1e-56 each, so
// the root differs from the reference by all of it: the budget's underflow
// term must cover that, and still catch an answer off by a normal amount.
TEST(error_budget, UnderflowedProductsAreWithinTheBudget) {
  Graph g;
  g.params = {{"a", {DType::F32, {1, 1000}}}};
  NodeId a = param(g, 0);
  g.outputs = {unary(g, Op::Sqrt, reduce(g, Op::ReduceSum, binary(g, Op::Mul, a, a), {1}))};
  Tensor in = t({1, 1000}, std::vector<double>(1000, 1e-28));
  auto ref = axon::verify::interpret(g, {in});
  auto bound = axon::verify::error_bounds(g, {in});
  EXPECT_NEAR(ref[0].data[0], std::sqrt(1000.0) * 1e-28, 1e-40);
  float x = 1e-28f, sum = 0;
  for (int i = 0; i < 1000; ++i) sum += x * x;
  EXPECT_EQ(std::sqrt(sum), 0.0f);
  EXPECT_TRUE(axon::verify::compare_with_budget({std::sqrt(sum)}, ref[0], bound[0]).ok());
  EXPECT_FALSE(axon::verify::compare_with_budget({1e-3f}, ref[0], bound[0]).ok());
  // with normal inputs the term is invisible: the dropped-term test above
  // and this exact bound of a sum of 2.0s hold as before
  Graph s;
  s.params = {{"a", {DType::F32, {1, 1000}}}};
  s.outputs = {reduce(s, Op::ReduceSum, param(s, 0), {1})};
  EXPECT_NEAR(axon::verify::error_bounds(s, {t({1, 1000}, std::vector<double>(1000, 2.0))})[0].data[0],
              8 * std::sqrt(1000.0) * std::ldexp(1.0, -24) * 2000, 1e-30);
}

TEST(error_budget, NonFiniteMustMatchExactly) {
  Tensor ref{Type{DType::F32, {3}}, {INFINITY, NAN, 1.0}};
  Tensor bound{Type{DType::F32, {3}}, {0, 0, 0}};
  EXPECT_TRUE(axon::verify::compare_with_budget({INFINITY, NAN, 1.0}, ref, bound).ok());
  EXPECT_FALSE(axon::verify::compare_with_budget({-INFINITY, NAN, 1.0}, ref, bound).ok());
  EXPECT_FALSE(axon::verify::compare_with_budget({INFINITY, 0.0, 1.0}, ref, bound).ok());
  EXPECT_FALSE(axon::verify::compare_with_budget({INFINITY, NAN, NAN}, ref, bound).ok());
}

// A float64 reference past the output dtype's range (exp(x) * s with x near
// 89 in float32) within its budget of a value that rounds to infinity: the
// kernel's infinity of that sign is the rounded answer. Not the other sign,
// not when the budget keeps the value in range, and never in float64.
TEST(error_budget, OverflowToInfinityIsTheRoundedAnswerPastTheDtypesRange) {
  const double big = 7.9e38, edge = 3.0e38;  // FLT_MAX is 3.40282347e38
  Tensor ref{Type{DType::F32, {3}}, {big, -big, edge - 1e30}};
  Tensor bound{Type{DType::F32, {3}}, {1e33, 1e33, 1e31}};
  EXPECT_TRUE(axon::verify::compare_with_budget({INFINITY, -INFINITY, edge - 1e30}, ref, bound).ok());
  EXPECT_EQ(axon::verify::compare_with_budget({INFINITY, -INFINITY, edge - 1e30}, ref, bound).max_abs_error, 0);
  EXPECT_FALSE(axon::verify::compare_with_budget({-INFINITY, -INFINITY, edge - 1e30}, ref, bound).ok());
  EXPECT_FALSE(axon::verify::compare_with_budget({INFINITY, -INFINITY, INFINITY}, ref, bound).ok());
  EXPECT_FALSE(axon::verify::compare_with_budget({NAN, -INFINITY, edge - 1e30}, ref, bound).ok());
  Tensor ref64{Type{DType::F64, {1}}, {big}};
  Tensor bound64{Type{DType::F64, {1}}, {1e33}};
  EXPECT_FALSE(axon::verify::compare_with_budget({INFINITY}, ref64, bound64).ok());
}

// A NaN bound is a gap in the bounds, not a licence to be wrong.
TEST(error_budget, NaNBoundPassesOnlyExactResults) {
  Tensor ref{Type{DType::F32, {2}}, {1.0, 2.0}};
  Tensor bound{Type{DType::F32, {2}}, {NAN, 0}};
  EXPECT_TRUE(axon::verify::compare_with_budget({1.0, 2.0}, ref, bound).ok());
  EXPECT_FALSE(axon::verify::compare_with_budget({1.5, 2.0}, ref, bound).ok());
}

Graph spec_graph(const std::string& src) {
  return axon::frontend::parse_spec("inline.py", src, {}).graph;
}

// Causal attention masks scores with -inf: exp(-inf - m) is exactly 0, and
// its bound must be 0 too (it was 0 * inf = NaN, which made the whole
// output's budget NaN and every finite answer pass).
TEST(error_budget, MaskedSoftmaxHasFiniteBoundsThatCatchAWrongAnswer) {
  Graph g = spec_graph(
      "import numpy as np\n\ndef f(s: \"f32[6, 6]\", V: \"f32[6, 3]\"):\n"
      "    mask = np.triu(np.ones((6, 6), dtype=bool), k=1)\n"
      "    s = np.where(mask, -np.inf, s)\n"
      "    m = np.max(s, axis=-1, keepdims=True)\n    e = np.exp(s - m)\n"
      "    return (e / np.sum(e, axis=-1, keepdims=True)) @ V\n");
  auto in = axon::verify::random_inputs(g, 3);
  auto ref = axon::verify::interpret(g, in);
  auto bound = axon::verify::error_bounds(g, in);
  for (double b : bound[0].data) EXPECT_TRUE(std::isfinite(b)) << b;
  std::vector<double> wrong = ref[0].data;
  wrong[7] += 1e-3 * (1 + std::fabs(wrong[7]));
  EXPECT_TRUE(axon::verify::compare_with_budget(ref[0].data, ref[0], bound[0]).ok());
  EXPECT_FALSE(axon::verify::compare_with_budget(wrong, ref[0], bound[0]).ok());
}

// Softmax over scores of wide range: exp(x - m) underflows to 0 where the
// bound of x - m is past 709, and |0| (exp(E) - 1) was 0 * inf = NaN, which
// made the row's budget NaN and rejected a kernel one ulp from the
// reference (the gate's wide_range inputs on GQA decode).
TEST(error_budget, UnderflowingExpOfAnUncertainArgumentHasAFiniteBound) {
  Graph g = spec_graph(
      "import numpy as np\n\ndef f(s: \"f32[1, 3]\", V: \"f32[3, 2]\"):\n"
      "    m = np.max(s, axis=-1, keepdims=True)\n    e = np.exp(s - m)\n"
      "    return (e / np.sum(e, axis=-1, keepdims=True)) @ V\n");
  std::vector<Tensor> in = {t({1, 3}, {3e13, -3e13, 1.0}), t({3, 2}, {1.5, -2.0, 0.25, 4.0, 3.0, 1.0})};
  auto ref = axon::verify::interpret(g, in);
  auto bound = axon::verify::error_bounds(g, in);
  for (double b : bound[0].data) EXPECT_TRUE(std::isfinite(b)) << b;
  std::vector<double> near = ref[0].data, wrong = ref[0].data;
  near[0] = std::nextafter(static_cast<float>(near[0]), 0.0f);  // one ulp of f32 off
  wrong[0] += 1e-3;
  EXPECT_TRUE(axon::verify::compare_with_budget(near, ref[0], bound[0]).ok());
  EXPECT_FALSE(axon::verify::compare_with_budget(wrong, ref[0], bound[0]).ok());
}

// Scores whose bound passes 709 (cancelling products of large q and K):
// every exp(x - m) of the row has an infinite bound, the underflowing ones
// included, and so has the sum. e / sum then read |0| * inf = NaN where e
// underflowed, a NaN budget that rejected a GQA decode kernel one ulp from
// the reference. The row's bound is infinite: the first-order rule cannot
// bound it, and says so (every finite answer passes; a non-finite one for a
// finite reference too, as for any unbounded element).
TEST(error_budget, UnboundedScoresGiveAnInfiniteBoundNotNaN) {
  Graph g = spec_graph(
      "import numpy as np\n\ndef f(q: \"f32[1, 2]\", K: \"f32[3, 2]\", V: \"f32[3, 2]\"):\n"
      "    s = q @ K.T\n"
      "    m = np.max(s, axis=-1, keepdims=True)\n    e = np.exp(s - m)\n"
      "    return (e / np.sum(e, axis=-1, keepdims=True)) @ V\n");
  // s = [0 (from 1e5 * 1e5 - 1e5 * 1e5, bound ~2e3), 1000, 500]: exp(0 - 1000) underflows.
  std::vector<Tensor> in = {t({1, 2}, {1e5, 1e5}), t({3, 2}, {1e5, -1e5, 0.0, 0.01, 0.0, 0.005}),
                            t({3, 2}, {1.5, -2.0, 0.25, 4.0, 3.0, 1.0})};
  auto ref = axon::verify::interpret(g, in);
  auto bound = axon::verify::error_bounds(g, in);
  for (double b : bound[0].data) EXPECT_TRUE(std::isinf(b) && b > 0) << b;
  std::vector<double> near = ref[0].data;
  near[0] = std::nextafter(static_cast<float>(near[0]), 0.0f);
  axon::verify::Comparison c = axon::verify::compare_with_budget(near, ref[0], bound[0]);
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.unbounded, 2);  // counted, so the gate's report can say what went unchecked
}

// A zero bound times an infinite magnitude adds nothing, and an infinite
// bound times a zero magnitude is infinite, in a plain product too.
TEST(error_budget, ProductOfZeroAndAnUnboundedFactorIsUnbounded) {
  Graph g = spec_graph("import numpy as np\n\ndef f(a: \"f32[2]\", b: \"f32[2]\"):\n"
                       "    return np.exp(a) * b\n");
  // exp(100) overflows f32: its bound is infinite; b = 0 there.
  auto bound = axon::verify::error_bounds(g, {t({2}, {100.0, 1.0}), t({2}, {0.0, 2.0})});
  EXPECT_TRUE(std::isinf(bound[0].data[0])) << bound[0].data[0];
  EXPECT_TRUE(std::isfinite(bound[0].data[1])) << bound[0].data[1];
}

// silu(x) = x / (1 + exp(-x)) with exp(-x) past the f32 range: the kernel's
// denominator is inf and its result 0, so the bound is about |silu(x)|, not
// infinite (an infinite one spread through the gated MLP's matmul to every
// output).
TEST(error_budget, OverflowingDenominatorIsBoundedByTheValue) {
  Graph g = spec_graph("import numpy as np\n\ndef f(x: \"f32[4]\"):\n    return x / (1.0 + np.exp(-x))\n");
  Tensor in = t({4}, {-100.0, -89.0, -50.0, 3.0});
  auto ref = axon::verify::interpret(g, {in});
  auto bound = axon::verify::error_bounds(g, {in});
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(std::isfinite(bound[0].data[i])) << i;
    EXPECT_LE(bound[0].data[i], std::fabs(ref[0].data[i]) + std::ldexp(1.0, -125)) << i;
  }
  EXPECT_TRUE(axon::verify::compare_with_budget({-0.0, -0.0, ref[0].data[2], ref[0].data[3]}, ref[0], bound[0]).ok());
  EXPECT_FALSE(axon::verify::compare_with_budget({-1e-3, -0.0, ref[0].data[2], ref[0].data[3]}, ref[0], bound[0]).ok());
}

// mish(y) = y tanh(log(1 + exp(y))) past exp's range: in f32 exp(y) is
// inf from y = 89 on, in f64 from y = 710, and then log(1 + exp(y)) is inf
// with an infinite bound (inf / inf in log's bound, inf - inf in tanh's).
// The bound is still a number: tanh moves by at most 2, so y's error is
// about 2|y|, and the f32 kernel's y tanh(inf) = y passes.
TEST(error_budget, SoftplusPastTheDoubleRangeKeepsANumericBound) {
  Graph g = spec_graph("import numpy as np\n\ndef f(y: \"f32[3]\"):\n"
                       "    return y * np.tanh(np.log(1.0 + np.exp(y)))\n");
  Tensor in = t({3}, {100.0, 800.0, 2.0});
  auto ref = axon::verify::interpret(g, {in});
  auto bound = axon::verify::error_bounds(g, {in});
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(std::isnan(bound[0].data[i])) << i;
    EXPECT_TRUE(std::isfinite(bound[0].data[i])) << i << ": " << bound[0].data[i];
  }
  std::vector<double> kernel = {100.0f, 800.0f, ref[0].data[2]};
  EXPECT_TRUE(axon::verify::compare_with_budget(kernel, ref[0], bound[0]).ok());
  EXPECT_FALSE(axon::verify::compare_with_budget({100.0, 5000.0, ref[0].data[2]}, ref[0], bound[0]).ok());
}

TEST(interpreter, Bf16RoundsOnceFromDouble) {
  // Rounding to float first would land on the tie 1 + 2^-8 and then on 1.
  EXPECT_EQ(axon::ir::round_to_bf16(1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)), 1.0078125);
  EXPECT_EQ(axon::ir::round_to_bf16(1 + std::ldexp(1.0, -8)), 1.0);  // a tie goes to even
  EXPECT_EQ(axon::ir::round_to_bf16(3.0), 3.0);
}

TEST(error_budget, CombinedEvaluationMatchesTheInterpreter) {
  Graph g;
  g.params = {{"a", {DType::F32, {3, 4}}}, {"m", {DType::Bool, {3, 4}}}};
  NodeId a = param(g, 0);
  NodeId e = unary(g, Op::Exp, a);
  NodeId w = select(g, param(g, 1), e, a);
  NodeId s = reduce(g, Op::ReduceSum, cast(g, w, DType::F64), {1});
  g.outputs = {cast(g, s, DType::F32), w, reduce(g, Op::ReduceSum, cast(g, param(g, 1), DType::I64), {1})};
  std::vector<double> av(12), mv(12);
  for (int i = 0; i < 12; ++i) {
    av[i] = 0.1 * i - 0.5;
    mv[i] = i % 3 == 0;
  }
  std::vector<Tensor> in = {t({3, 4}, av), Tensor{Type{DType::Bool, {3, 4}}, mv}};
  auto ref = axon::verify::interpret(g, in);
  auto rb = axon::verify::reference_with_bounds(g, in);
  auto bounds = axon::verify::error_bounds(g, in);
  ASSERT_EQ(rb.reference.size(), 3u);
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(rb.reference[j].data, ref[j].data) << "output " << j;
    EXPECT_EQ(rb.reference[j].type, ref[j].type) << "output " << j;
    EXPECT_EQ(rb.bounds[j].data, bounds[j].data) << "output " << j;
  }
  EXPECT_EQ(ref[2].data, (std::vector<double>{2, 1, 1}));
}

// Two parameters of one shape must get unrelated values: a kernel that swaps
// them, or reads one for the other at an offset, must not match by luck.
TEST(inputs, ParametersOfOneShapeAreNotShiftedCopies) {
  Graph g;
  for (const char* name : {"A", "B", "C", "D"}) g.params.push_back({name, Type{DType::F32, {64, 64}}});
  for (uint64_t seed : {0ull, 1ull, 12345ull}) {
    std::vector<Tensor> in = axon::verify::random_inputs(g, seed);
    for (size_t p = 0; p < in.size(); ++p)
      for (size_t q = p + 1; q < in.size(); ++q) {
        const auto& a = in[p].data;
        const auto& b = in[q].data;
        int equal = 0;
        for (size_t i = 0; i < a.size(); ++i)
          for (size_t shift = 0; shift < 64 && i + shift < b.size(); ++shift)
            equal += a[i] == b[i + shift] || b[i] == a[i + shift];
        EXPECT_EQ(equal, 0) << "seed " << seed << ", parameters " << p << " and " << q;
      }
  }
}
