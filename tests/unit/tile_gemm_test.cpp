// The GEMM as a tile program (tile/lower_gemm.h), IR in -> IR out: every
// blocking of every shape verifies and interprets to the product; and the
// index and verifier machinery that edge tiles need (min() extents, floor
// division of possibly negative values, a Matmul's first slice overwriting).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tile/index.h"
#include "tile/interpret.h"
#include "tile/lower_gemm.h"
#include "tile/verify.h"
#include "tile_test_support.h"

namespace axon::tile {
namespace {

using test::gemm_schedule;
using test::problems_text;

// Dense row-major [batch][M][K] x [batch][K][N], optionally transposed,
// broadcast or with C written transposed.
GemmShape shape(int64_t batch, int64_t M, int64_t N, int64_t K, bool ta = false, bool tb = false, bool bcast_b = false,
                bool c_transposed = false) {
  GemmShape g;
  g.batch = batch, g.M = M, g.N = N, g.K = K;
  if (ta) g.a_m = 1, g.a_k = M; else g.a_m = K, g.a_k = 1;
  if (tb) g.b_k = 1, g.b_n = K; else g.b_k = N, g.b_n = 1;
  g.a_batch = M * K;
  g.b_batch = bcast_b ? 0 : K * N;
  if (c_transposed) g.c_m = 1, g.c_n = M; else g.c_m = N, g.c_n = 1;
  g.c_batch = M * N;
  return g;
}


void check(const GemmShape& g, const GemmSchedule& s, const std::string& what) {
  Kernel k = lower_gemm(g, s);
  ASSERT_EQ(problems_text(verify(k)), "") << what;
  std::vector<ir::Tensor> in = test::random_inputs(k, {0, 1}, 7);
  std::vector<ir::Tensor> out = interpret(k, in);
  ASSERT_EQ(out.size(), 1u);
  test::expect_gemm_output(
      g, out[0], [&](int64_t b, int64_t m, int64_t n) { return test::gemm_product(g, in[0], in[1], b, m, n); }, what);
}

TEST(tile_gemm, EveryBlockingVerifiesAndInterpretsToTheProduct) {
  struct Dims { int64_t batch, M, N, K; };
  // {1, 13, 32, 40}: whole column blocks, which split_n 1 puts on the threads.
  // K = 37 at kc 16: the last slice's 5 rows cut the first group of 8 that
  // B's pack takes across the panels.
  const std::vector<Dims> dims = {{1, 1, 1, 1}, {1, 7, 9, 5},  {1, 13, 33, 40}, {1, 13, 32, 40},
                                  {2, 6, 16, 32}, {3, 11, 20, 9}, {5, 4, 8, 3}, {1, 13, 32, 37}};
  int cases = 0;
  for (const Dims& d : dims)
    for (auto [threads, split_n] : test::kThreadSplits)
      for (bool pack_a : {true, false})
        for (bool pack_b : {true, false}) {
          GemmShape g = shape(d.batch, d.M, d.N, d.K);
          // B in place needs whole panels (codegen/cpu/gemm.h's legality).
          const int nr = pack_b ? 8 : (d.N % 4 == 0 ? 4 : 1);
          GemmSchedule s = gemm_schedule(3, nr, 16, 6, 2 * nr, threads, pack_a, pack_b);
          s.split_n = split_n;
          check(g, s, std::to_string(d.batch) + "x" + std::to_string(d.M) + "x" + std::to_string(d.N) + "x" +
                          std::to_string(d.K) + " threads " + std::to_string(threads) + " split_n " +
                          std::to_string(split_n) + (pack_a ? " A packed" : " A in place") +
                          (pack_b ? " B packed" : " B in place"));
          ++cases;
        }
  EXPECT_EQ(cases, 96);
}

TEST(tile_gemm, StridedBroadcastAndTransposedOperands) {
  GemmSchedule s = gemm_schedule(4, 8, 8, 8, 16, 2, true, true);
  check(shape(1, 10, 12, 20, true, false), s, "A transposed");
  check(shape(1, 10, 12, 20, false, true), s, "B transposed");
  check(shape(3, 10, 12, 20, false, false, true), s, "B broadcast over batches");
  check(shape(1, 10, 12, 20, false, false, false, true), s, "C written transposed");
  check(shape(1, 9, 9, 0), s, "K = 0");
  s.split_n = 1;
  check(shape(1, 10, 12, 20, true, false), s, "A transposed, threads on column blocks");
  check(shape(1, 10, 12, 20, false, true), s, "B transposed, threads on column blocks");
  check(shape(1, 10, 12, 20, false, false, false, true), s, "C written transposed, threads on column blocks");
}

TEST(tile_gemm, ThreadsOwnRowRangesOrWholeBatches) {
  auto parallel_vars = [](const Kernel& k) {
    std::string vars;
    visit(k.body, [&](const Stmt& s) {
      if (s.kind() == StmtKind::For && s->loop == LoopKind::Parallel) vars += s->var + " ";
    });
    return vars;
  };
  EXPECT_EQ(parallel_vars(lower_gemm(shape(1, 40, 16, 8), gemm_schedule(4, 8, 8, 8, 16, 2, true, true))), "jp t ");
  EXPECT_EQ(parallel_vars(lower_gemm(shape(4, 40, 16, 8), gemm_schedule(4, 8, 8, 8, 16, 2, true, true))), "b ");
  // split_n 1: whole column blocks on the threads, each packing its own B
  // (no parallel loop inside); batches that feed every thread still go first.
  GemmSchedule cols = gemm_schedule(4, 8, 8, 8, 16, 2, true, true);
  cols.split_n = 1;
  EXPECT_EQ(parallel_vars(lower_gemm(shape(1, 40, 32, 8), cols)), "jb ");
  // Not shown disjoint, so ranges of rows instead: a short last block; C
  // written transposed (then one thread, as with ranges of rows).
  EXPECT_EQ(parallel_vars(lower_gemm(shape(1, 40, 33, 8), cols)), "jp t ");
  EXPECT_EQ(parallel_vars(lower_gemm(shape(1, 40, 32, 8, false, false, false, true), cols)), "");
  EXPECT_EQ(parallel_vars(lower_gemm(shape(4, 40, 32, 8), cols)), "b ");
  // C written transposed: row ranges interleave in memory; one thread.
  EXPECT_EQ(parallel_vars(lower_gemm(shape(1, 40, 16, 8, false, false, false, true), gemm_schedule(4, 8, 8, 8, 16, 2, true, true))), "");
}

TEST(tile_index, UpperBoundSeesThroughMin) {
  std::map<std::string, Interval> r = {{"x", {0, 19}}, {"y", {0, 3}}};
  Index x = Index::var("x"), y = Index::var("y");
  // x + min(8, 20 - x) - 1 <= 19, which intervals alone put at 26.
  Index e = x + min(Index(8), Index(20) - x) - Index(1);
  EXPECT_EQ(bounds(e, r)->hi, 26);
  EXPECT_EQ(upper_bound(e, r), 19);
  // Under a negative factor a min is a max: no sharper, never wrong.
  Index f = Index(10) - min(x, Index(3));
  EXPECT_EQ(upper_bound(f, r), 10);
  // (a / 4) * 4 <= a
  Index g = ((x + y) / Index(4)) * Index(4) + Index(20) - x;
  EXPECT_LE(*upper_bound(g, r), 23);
  EXPECT_TRUE(non_decreasing_in(x * Index(3) + min(x, y), "x"));
  EXPECT_FALSE(non_decreasing_in(Index(3) - x, "x"));
  EXPECT_FALSE(non_decreasing_in(x % Index(3), "x"));
}

TEST(tile_index, DivisionOfPossiblyNegativeValues) {
  std::map<std::string, Interval> r = {{"x", {0, 10}}};
  // (5 - x) / 4 over x in [0, 10]: floor gives -2 at x = 10, C's truncation -1.
  std::optional<Interval> b = bounds((Index(5) - Index::var("x")) / Index(4), r);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->lo, -2);
  EXPECT_EQ(b->hi, 1);
}

// A loop whose extent depends on an outer variable (an edge tile) and the
// Matmul's keep, as the verifier sees them.
TEST(tile_verify, EdgeExtentsAndMatmulFirstSlice) {
  auto kernel = [](int64_t n, int64_t out_len) {
    Kernel k;
    int X = k.add_buffer({"X", ir::DType::F32, {n}, Scope::Input, 0});
    Buffer o{"out", ir::DType::F32, {out_len}, Scope::Output};
    o.output = 0;
    int out = k.add_buffer(o);
    Index t = Index::var("t"), i = Index::var("i");
    Stmt body = Stmt::store(out, {t * Index(8) + i}, Value::load(X, {t * Index(8) + i}, ir::DType::F32));
    Stmt inner = Stmt::loop("i", min(Index(8), Index(n) - t * Index(8)), LoopKind::Serial, body);
    k.body = Stmt::loop("t", Index((n + 7) / 8), LoopKind::Parallel, inner);
    return k;
  };
  EXPECT_EQ(problems_text(verify(kernel(13, 13))), "");
  EXPECT_NE(problems_text(verify(kernel(13, 12))).find("outside [0, 12)"), std::string::npos);

  auto matmul = [](const Index& keep) {
    Kernel k;
    int A = k.add_buffer({"A", ir::DType::F32, {4}, Scope::Input, 0});
    int B = k.add_buffer({"B", ir::DType::F32, {4}, Scope::Input, 1});
    Buffer c{"C", ir::DType::F32, {4}, Scope::Output};
    c.output = 0;
    int C = k.add_buffer(c);
    Index p = Index::var("p");
    Stmt mm = Stmt::matmul(View{C, Index(0), {2, 1}}, View{A, p, {2, 1}}, View{B, p * Index(2), {2, 1}},
                           Index(2), Index(2), Index(1), keep);
    k.body = Stmt::loop("p", Index(2), LoopKind::Serial, mm);
    return k;
  };
  EXPECT_EQ(problems_text(verify(matmul(min(Index::var("p"), Index(1))))), "");
  EXPECT_NE(problems_text(verify(matmul(Index(1)))).find("reads C before anything writes it"), std::string::npos);
}

}  // namespace
}  // namespace axon::tile
