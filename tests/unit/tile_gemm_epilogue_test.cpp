// The GEMM with an elementwise epilogue as one tile program
// (tile/lower_gemm.h, GemmEpilogue), IR in -> IR out: every blocking, with
// the epilogue on each register tile (the last K slice peeled) or in one
// pass after, verifies and interprets to E(A . B) computed here in float64;
// the program has the form it promises (the epilogue after the last
// slice's Matmul, inside the tile loops; the other slices plain).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "codegen/cpu/gemm.h"
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

// E(b, m, n, c) = tanh(c + bias[n]) * R[b, m, n]: a bias broadcast along the
// rows, an activation and a residual product, read through their shapes.
GemmEpilogue bias_tanh_gate(const GemmShape& g) {
  GemmEpilogue e;
  e.extra = {Buffer{"bias", ir::DType::F32, {g.N}, Scope::Input}, Buffer{"R", ir::DType::F32, {g.batch, g.M, g.N}, Scope::Input}};
  e.f = [](const Index& b, const Index& m, const Index& n, const Value& c, const std::vector<int>& x) {
    Value biased = Value::apply(op(ir::Op::Add), {c, Value::load(x.at(0), {n}, ir::DType::F32)});
    return Value::apply(op(ir::Op::Mul), {Value::apply(op(ir::Op::Tanh), {biased}),
                                          Value::load(x.at(1), {b, m, n}, ir::DType::F32)});
  };
  return e;
}


void check(const GemmShape& g, const GemmSchedule& s, const std::string& what) {
  GemmEpilogue e = bias_tanh_gate(g);
  Kernel k = lower_gemm(g, s, "gemm", &e);
  ASSERT_EQ(problems_text(verify(k)), "") << what << "\n" << print(k);
  // Buffers: A, B, C, then the epilogue's inputs as params 2 and 3.
  ASSERT_EQ(k.buffers[3].param, 2);
  ASSERT_EQ(k.buffers[4].param, 3);
  std::vector<ir::Tensor> in = test::random_inputs(k, {0, 1, 3, 4}, 11);
  std::vector<ir::Tensor> out = interpret(k, in);
  ASSERT_EQ(out.size(), 1u);
  test::expect_gemm_output(
      g, out[0],
      [&](int64_t b, int64_t m, int64_t n) {
        const double c = test::gemm_product(g, in[0], in[1], b, m, n);
        return std::tanh(c + in[2].data[n]) * in[3].data[(b * g.M + m) * g.N + n];
      },
      what);
}

TEST(tile_gemm_epilogue, EveryBlockingVerifiesAndInterpretsToTheEpilogueOfTheProduct) {
  struct Dims { int64_t batch, M, N, K; };
  // K of one slice, of several with a short last one, and of whole slices;
  // M and N cut by the tiles' edges; batches.
  // {1, 13, 32, 40}: whole column blocks, which split_n 1 puts on the threads.
  const std::vector<Dims> dims = {{1, 1, 1, 1}, {1, 7, 9, 5}, {1, 13, 33, 40}, {1, 13, 32, 40}, {2, 6, 16, 32}, {3, 11, 20, 9}};
  int cases = 0;
  for (const Dims& d : dims)
    for (auto [threads, split_n] : test::kThreadSplits)
      for (bool pack_a : {true, false})
        for (int epilogue : {1, 0}) {
          const GemmShape g = codegen::dense_gemm_shape(d.batch, d.M, d.N, d.K);
          GemmSchedule s = gemm_schedule(3, 8, 16, 6, 16, threads, pack_a, true, epilogue);
          s.split_n = split_n;
          check(g, s,
                std::to_string(d.batch) + "x" + std::to_string(d.M) + "x" + std::to_string(d.N) + "x" + std::to_string(d.K) +
                    " threads " + std::to_string(threads) + " split_n " + std::to_string(split_n) + (pack_a ? " A packed" : " A in place") + " epilogue " +
                    std::to_string(epilogue));
          ++cases;
        }
  EXPECT_EQ(cases, 72);
  // B read in place (whole panels), and the empty sum: C = E(0).
  check(codegen::dense_gemm_shape(1, 10, 16, 20), gemm_schedule(4, 8, 8, 8, 16, 2, true, false, 1), "B in place");
  check(codegen::dense_gemm_shape(2, 9, 9, 0), gemm_schedule(4, 8, 8, 8, 16, 1, true, true, 1), "K = 0");
}

// The epilogue runs once per element, right after the last slice's Matmul
// of its tile: the pb loop covers the other slices, and the peeled slice's
// Matmul adds to C (keep 1) and is followed, in the same jr loop, by the
// epilogue's loops, the one along n vectorized.
TEST(tile_gemm_epilogue, TheLastSliceIsPeeledAndEachTileTakesTheEpilogue) {
  const GemmShape g = codegen::dense_gemm_shape(1, 12, 32, 40);
  GemmEpilogue e = bias_tanh_gate(g);
  const Kernel k = lower_gemm(g, gemm_schedule(4, 16, 16, 8, 32, 1, true, true, 1), "gemm", &e);
  ASSERT_EQ(problems_text(verify(k)), "");
  int matmuls = 0, stores_to_c = 0;
  std::string pb_extent;
  visit(k.body, [&](const Stmt& s) {
    if (s.kind() == StmtKind::Matmul) ++matmuls;
    if (s.kind() == StmtKind::For && s->var == "pb") pb_extent = s->extent.str();
    if (s.kind() == StmtKind::For && s->var == "jr" && s->body.at(0).kind() == StmtKind::Seq) {
      const Stmt& body = s->body.at(0);
      ASSERT_EQ(body->body.size(), 2u);
      EXPECT_EQ(body->body[0].kind(), StmtKind::Matmul);
      EXPECT_TRUE(body->body[0]->keep.is_const() && body->body[0]->keep.value() == 1);
      const Stmt& ei = body->body[1];
      ASSERT_EQ(ei.kind(), StmtKind::For);
      EXPECT_EQ(ei->var, "ei");
      EXPECT_EQ(ei->body.at(0)->loop, LoopKind::Vectorized);
      ++stores_to_c;
    }
  });
  EXPECT_EQ(pb_extent, "2");  // slices 0 and 1; slice 2 (8 deep) peeled
  EXPECT_EQ(matmuls, 2);      // one in the pb loop, one in the peeled slice
  EXPECT_EQ(stores_to_c, 1);
  // The bias is read at n alone, not at n % N: the vector form's unit stride.
  EXPECT_NE(print(k).find("bias[jr * 16 + ej]"), std::string::npos) << print(k);
  // One pass after the product instead: no peeled slice, a parallel pass.
  const Kernel pass = lower_gemm(g, gemm_schedule(4, 16, 16, 8, 32, 2, true, true, 0), "gemm", &e);
  ASSERT_EQ(problems_text(verify(pass)), "");
  EXPECT_NE(print(pass).find("for pb in [0, 3)"), std::string::npos) << print(pass);
  EXPECT_NE(print(pass).find("for em in [0, 12) parallel"), std::string::npos) << print(pass);
}

}  // namespace
}  // namespace axon::tile
