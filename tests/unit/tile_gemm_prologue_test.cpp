// The GEMM with operands computed by the kernel (tile/lower_gemm.h,
// GemmPrologue), IR in -> IR out: every blocking, with each operand's
// function applied where it is packed (prologue 1) or to the whole operand
// first (prologue 0), verifies and interprets to A' . B' computed here in
// float64, A' = A * g (a gain along k) and B' = B * h (one along k too);
// the packing copies compute the function, and an operand computed as
// packed cannot be read in place.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/cpu/gemm.h"
#include "support/diagnostic.h"
#include "tile/interpret.h"
#include "tile/lower_gemm.h"
#include "tile/print.h"
#include "tile/verify.h"
#include "tile_test_support.h"

namespace axon::tile {
namespace {

using test::gemm_schedule;
using test::problems_text;
constexpr auto op = test::f32_op;

// A' = A * g[k] and B' = B * h[k]: the source read at the operand's dense
// index, the gains through their own shapes.
GemmPrologue gains(const GemmShape& g, bool on_a, bool on_b) {
  GemmPrologue p;
  auto dense = [](const GemmShape& s, const Index& b, const Index& i, const Index& j, int64_t I, int64_t J, bool batched) {
    return (batched ? b * Index(I * J) : Index(0)) + i * Index(J) + j;
  };
  if (on_a) {
    p.extra.push_back(Buffer{"ga", ir::DType::F32, {g.K}, Scope::Input});
    p.a = [g, dense](const Index& b, const Index& m, const Index& k, int source, const std::vector<int>& x) {
      return Value::apply(op(ir::Op::Mul), {Value::load(source, {dense(g, b, m, k, g.M, g.K, g.a_batch != 0)}, ir::DType::F32),
                                            Value::load(x.at(0), {k}, ir::DType::F32)});
    };
  }
  if (on_b) {
    const size_t slot = p.extra.size();
    p.extra.push_back(Buffer{"hb", ir::DType::F32, {g.K}, Scope::Input});
    p.b = [g, dense, slot](const Index& b, const Index& k, const Index& n, int source, const std::vector<int>& x) {
      return Value::apply(op(ir::Op::Mul), {Value::load(source, {dense(g, b, k, n, g.K, g.N, g.b_batch != 0)}, ir::DType::F32),
                                            Value::load(x.at(slot), {k}, ir::DType::F32)});
    };
  }
  return p;
}

void check(const GemmShape& g, const GemmSchedule& s, bool on_a, bool on_b, const std::string& what) {
  GemmPrologue p = gains(g, on_a, on_b);
  Kernel k = lower_gemm(g, s, "gemm", nullptr, &p);
  ASSERT_EQ(problems_text(verify(k)), "") << what << "\n" << print(k);
  // Buffers: A, B, C, then the prologue's inputs as params 2 (and 3).
  std::vector<int> ins = {0, 1};
  for (size_t i = 0; i < p.extra.size(); ++i) {
    ASSERT_EQ(k.buffers[3 + i].param, static_cast<int>(2 + i)) << what;
    ins.push_back(static_cast<int>(3 + i));
  }
  std::vector<ir::Tensor> in = test::random_inputs(k, ins, 17);
  std::vector<ir::Tensor> out = interpret(k, in);
  ASSERT_EQ(out.size(), 1u);
  const ir::Tensor* ga = on_a ? &in[2] : nullptr;
  const ir::Tensor* hb = on_b ? &in[on_a ? 3 : 2] : nullptr;
  test::expect_gemm_output(
      g, out[0],
      [&](int64_t b, int64_t m, int64_t n) {
        double c = 0;
        for (int64_t l = 0; l < g.K; ++l) {
          const double a = in[0].data[static_cast<size_t>(b * g.a_batch + m * g.a_m + l)] * (ga ? ga->data[l] : 1.0);
          const double w = in[1].data[static_cast<size_t>(b * g.b_batch + l * g.b_k + n)] * (hb ? hb->data[l] : 1.0);
          c += a * w;
        }
        return c;
      },
      what);
}

TEST(tile_gemm_prologue, EveryBlockingVerifiesAndInterpretsToTheProductOfTheComputedOperands) {
  struct Dims { int64_t batch, M, N, K; };
  const std::vector<Dims> dims = {{1, 1, 1, 1}, {1, 7, 9, 5}, {1, 13, 33, 40}, {1, 13, 32, 40}, {2, 6, 16, 32}, {3, 11, 20, 9}};
  struct Side { bool a, b; };
  int cases = 0;
  for (const Dims& d : dims)
    for (auto [threads, split_n] : test::kThreadSplits)
      for (Side side : {Side{true, false}, Side{false, true}, Side{true, true}})
        for (int prologue : {1, 0})
          for (bool pack_a : {true, false}) {
            if (prologue == 1 && side.a && !pack_a) continue;  // computed as packed: packed
            const GemmShape g = codegen::dense_gemm_shape(d.batch, d.M, d.N, d.K);
            GemmSchedule s = gemm_schedule(3, 8, 16, 6, 16, threads, pack_a, true);
            s.split_n = split_n;
            s.prologue = prologue;
            check(g, s, side.a, side.b,
                  std::to_string(d.batch) + "x" + std::to_string(d.M) + "x" + std::to_string(d.N) + "x" +
                      std::to_string(d.K) + " threads " + std::to_string(threads) + " split_n " + std::to_string(split_n) +
                      (side.a ? " A'" : "") + (side.b ? " B'" : "") + " prologue " + std::to_string(prologue) +
                      (pack_a ? " A packed" : " A in place"));
            ++cases;
          }
  EXPECT_EQ(cases, 180);  // 6 shapes x 3 placements x 10 (12 less A computed as packed but in place)
  // A weight shared by the batches (B's batch stride 0), computed as packed.
  GemmShape shared = codegen::dense_gemm_shape(2, 5, 16, 12);
  shared.b_batch = 0;
  GemmSchedule s = gemm_schedule(3, 8, 8, 6, 16, 2, true, true);
  check(shared, s, true, true, "B shared by the batches");
}

// Computed as packed, the packing copies apply the function (the gain read
// at the slice's k; A's rows in vectors, then into the panel) and no buffer
// of the operand's size is allocated;
// computed first, one parallel pass fills Aval, which the product reads;
// an operand computed as packed but read in place is refused.
TEST(tile_gemm_prologue, ThePackingCopiesComputeTheOperand) {
  const GemmShape g = codegen::dense_gemm_shape(1, 12, 32, 40);
  GemmPrologue p = gains(g, true, false);
  const Kernel packed = lower_gemm(g, gemm_schedule(4, 16, 16, 8, 32, 1, true, true), "gemm", nullptr, &p);
  ASSERT_EQ(problems_text(verify(packed)), "");
  const std::string text = print(packed);
  // Each row's slice in vectors into Arow, then into the panel's column.
  EXPECT_NE(text.find("alloc Arow: scratch f32[16]"), std::string::npos) << text;
  EXPECT_NE(text.find("Arow[k] = mul(A["), std::string::npos) << text;
  EXPECT_NE(text.find("Apack[ip * 64 + k * 4 + r] = Arow[k]"), std::string::npos) << text;
  EXPECT_NE(text.find("ga[pb * 16 + k]"), std::string::npos) << text;
  EXPECT_EQ(text.find("Aval"), std::string::npos) << text;
  GemmSchedule whole = gemm_schedule(4, 16, 16, 8, 32, 2, false, true);
  whole.prologue = 0;
  const Kernel first = lower_gemm(g, whole, "gemm", nullptr, &p);
  ASSERT_EQ(problems_text(verify(first)), "");
  const std::string t2 = print(first);
  EXPECT_NE(t2.find("alloc Aval: memory"), std::string::npos) << t2;
  EXPECT_NE(t2.find("for oi in [0, 12) parallel"), std::string::npos) << t2;
  EXPECT_NE(t2.find("matmul C{"), std::string::npos) << t2;
  EXPECT_NE(t2.find(". Bpack{"), std::string::npos) << t2;
  EXPECT_NE(t2.find("Aval{offset"), std::string::npos) << t2;
  EXPECT_THROW(lower_gemm(g, gemm_schedule(4, 16, 16, 8, 32, 1, false, true), "gemm", nullptr, &p), InternalError);
}

}  // namespace
}  // namespace axon::tile
