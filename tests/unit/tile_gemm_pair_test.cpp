// The GEMM with a paired epilogue (two products over one A, tile/lower_gemm.h
// GemmEpilogue::paired) as one tile program, IR in -> IR out: with both
// products on one A panel (pair 1) and one after the other (pair 0), every
// blocking verifies and interprets to F(A . B, A . B2) computed here in
// float64; pair 1 has the form it promises (one Matmul per tile over a panel
// of B2's and B's columns side by side, one store of C per element).
#include <gtest/gtest.h>

#include <cmath>
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

// F(b, m, n, c, c2) = tanh(c2) * c + bias[n]: a gate of one product on the
// other, and an input read along n.
GemmEpilogue gated(const GemmShape& g) {
  GemmEpilogue e;
  e.paired = true;
  e.extra = {Buffer{"bias", ir::DType::F32, {g.N}, Scope::Input}};
  e.f2 = [](const Index&, const Index&, const Index& n, const Value& c, const Value& c2, const std::vector<int>& x) {
    Value gate = Value::apply(op(ir::Op::Mul), {Value::apply(op(ir::Op::Tanh), {c2}), c});
    return Value::apply(op(ir::Op::Add), {gate, Value::load(x.at(0), {n}, ir::DType::F32)});
  };
  return e;
}

void check(const GemmShape& g, const GemmSchedule& s, const std::string& what) {
  GemmEpilogue e = gated(g);
  Kernel k = lower_gemm(g, s, "gemm", &e);
  ASSERT_EQ(problems_text(verify(k)), "") << what << "\n" << print(k);
  // Buffers: A, B, C, B2 (param 2), then the bias (param 3).
  ASSERT_EQ(k.buffers[3].name, "B2");
  ASSERT_EQ(k.buffers[3].param, 2);
  ASSERT_EQ(k.buffers[4].param, 3);
  std::vector<ir::Tensor> in = test::random_inputs(k, {0, 1, 3, 4}, 17);
  std::vector<ir::Tensor> out = interpret(k, in);
  ASSERT_EQ(out.size(), 1u);
  test::expect_gemm_output(
      g, out[0],
      [&](int64_t b, int64_t m, int64_t n) {
        const double c = test::gemm_product(g, in[0], in[1], b, m, n);
        const double c2 = test::gemm_product(g, in[0], in[2], b, m, n);
        return std::tanh(c2) * c + in[3].data[static_cast<size_t>(n)];
      },
      what);
}

TEST(tile_gemm_pair, EveryBlockingVerifiesAndInterpretsToTheEpilogueOfBothProducts) {
  struct Dims { int64_t batch, M, N, K; };
  // K of one slice, of several with a short last one; M and N cut by the
  // tiles' edges and the half panels (N = 9 at nr/2 = 4); several column
  // blocks (N = 20 at nc/2 = 8); batches (parallel on two threads when 2).
  // {1, 13, 16, 40}: whole column blocks, which split_n 1 puts on the threads.
  const std::vector<Dims> dims = {{1, 1, 1, 1}, {1, 7, 9, 5}, {1, 13, 20, 40}, {1, 13, 16, 40}, {2, 6, 16, 32}, {3, 11, 12, 9}};
  int cases = 0;
  for (const Dims& d : dims)
    for (auto [threads, split_n] : test::kThreadSplits)
      for (bool pack_a : {true, false})
        for (int pair : {1, 0}) {
          const GemmShape g = codegen::dense_gemm_shape(d.batch, d.M, d.N, d.K);
          GemmSchedule s = gemm_schedule(3, 8, 16, 6, 16, threads, pack_a, true, 1);
          s.pair = pair, s.split_n = split_n;
          check(g, s,
                std::to_string(d.batch) + "x" + std::to_string(d.M) + "x" + std::to_string(d.N) + "x" + std::to_string(d.K) +
                    " threads " + std::to_string(threads) + " split_n " + std::to_string(split_n) + (pack_a ? " A packed" : " A in place") + " pair " +
                    std::to_string(pair));
          ++cases;
        }
  EXPECT_EQ(cases, 72);
  // Apart, the epilogue in one pass after; B read in place; the empty sum.
  GemmSchedule pass = gemm_schedule(4, 8, 8, 8, 16, 2, true, true, 0);
  pass.pair = 0;
  check(codegen::dense_gemm_shape(1, 10, 13, 20), pass, "apart, one pass after");
  GemmSchedule in_place = gemm_schedule(4, 8, 8, 8, 16, 1, true, false, 1);
  in_place.pair = 0;
  check(codegen::dense_gemm_shape(1, 10, 16, 20), in_place, "apart, B in place");
  GemmSchedule empty = gemm_schedule(4, 8, 8, 8, 16, 1, true, true, 1);
  check(codegen::dense_gemm_shape(2, 9, 9, 0), empty, "K = 0");
}

// On one panel: B2's columns then B's in each packed row, one Matmul per
// register tile into Cpair (whole panels, nr wide), and after the last
// slice's Matmul the epilogue over the nr/2 columns of C it covers, reading
// both halves of the tile; C is stored nowhere else.
TEST(tile_gemm_pair, OnePanelHoldsBothProductsAndEachTileStoresOnce) {
  const GemmShape g = codegen::dense_gemm_shape(1, 12, 24, 40);
  GemmEpilogue e = gated(g);
  GemmSchedule s = gemm_schedule(4, 16, 16, 8, 32, 1, true, true, 1);
  const Kernel k = lower_gemm(g, s, "gemm", &e);
  ASSERT_EQ(problems_text(verify(k)), "");
  const std::string text = print(k);
  int matmuls = 0, stores_to_c = 0;
  visit(k.body, [&](const Stmt& st) {
    if (st.kind() == StmtKind::Matmul) {
      ++matmuls;
      EXPECT_EQ(k.buffers[static_cast<size_t>(st->c.buffer)].name, "Cpair");
      EXPECT_TRUE(st->n.is_const() && st->n.value() == 16) << st->n.str();
    }
    if (st.kind() == StmtKind::Store && st->buffer == 2) ++stores_to_c;
  });
  EXPECT_EQ(matmuls, 2);      // the pb loop's, and the peeled last slice's
  EXPECT_EQ(stores_to_c, 1);  // the epilogue's
  // A row of panel jp: 8 columns of B2 from jb * 16 + jp * 8, then of B.
  EXPECT_NE(text.find("Bpack[jp * 256 + k * 16 + j] = B2["), std::string::npos) << text;
  EXPECT_NE(text.find("Bpack[jp * 256 + k * 16 + j + 8] = B["), std::string::npos) << text;
  // nc 32 counts both products: blocks of 16 columns of C, two of them.
  EXPECT_NE(text.find("for jb in [0, 2)"), std::string::npos) << text;
  // Apart: two products, the first into T.
  s.pair = 0;
  const Kernel apart = lower_gemm(g, s, "gemm", &e);
  ASSERT_EQ(problems_text(verify(apart)), "");
  EXPECT_NE(print(apart).find("alloc T: memory"), std::string::npos) << print(apart);
  int apart_matmuls = 0;
  visit(apart.body, [&](const Stmt& st) { apart_matmuls += st.kind() == StmtKind::Matmul; });
  EXPECT_EQ(apart_matmuls, 3);  // A . B2 in its pb loop; A . B in its pb loop and its peeled slice
}

}  // namespace
}  // namespace axon::tile
