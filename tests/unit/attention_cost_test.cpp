// The attention stage's cost model (codegen/cpu/attention.h) ranks the
// schedules the search times first: m5's shape on the AVX2 Zen 3 host's
// description (2 cores, 512 KiB L2 per core, 32 MiB L3, the FMA and triad
// rates `axon bench` probed there).
#include <gtest/gtest.h>

#include <string>

#include "cpu_test_support.h"

namespace axon {
namespace {

target::Target zen3_avx2() {
  target::Target t;
  t.name = "AMD EPYC (AVX2 Zen 3 description)";
  t.cores = 2, t.threads = 2;
  t.caches = {{1, 32 << 10, 64, 1}, {2, 512 << 10, 64, 1}, {3, 32 << 20, 64, 2}};
  t.isa.avx2 = true, t.isa.fma = true;
  t.peaks.fma_gflops_1t = 101, t.peaks.fma_gflops_all = 170.7;
  t.peaks.stream_gbs_1t = 20, t.peaks.stream_gbs_all = 25.8;
  return t;
}

const std::string kM5 =
    "import numpy as np\n"
    "def softmax(x, axis=-1):\n"
    "    m = np.max(x, axis=axis, keepdims=True)\n"
    "    e = np.exp(x - m)\n"
    "    return e / np.sum(e, axis=axis, keepdims=True)\n"
    "def f(Q: \"f32[16, 1024, 64]\", K: \"f32[16, 1024, 64]\", V: \"f32[16, 1024, 64]\"):\n"
    "    return softmax(Q @ np.swapaxes(K, -1, -2) * 0.125) @ V\n";

double seconds(const ir::Graph& g, const target::Target& t, int64_t bq, int64_t bk) {
  schedule::Schedule s = schedule::default_schedule(schedule::schedule_space(g, t));
  s["k0.attn.bq"] = bq, s["k0.attn.bk"] = bk;
  EXPECT_EQ(schedule::why_illegal(g, s, t), "") << bq << " x " << bk;
  return schedule::predicted_seconds(g, s, t);
}

// Measured there on one thread (CPU time, alternating): bq = bk = 256 took
// 1.20-1.25x the time of 64 x 64, 64 x 128 1.05-1.09x. The model once
// ranked every 256-row block ahead of 64 (it counted each query block's
// re-reads of a head's K and V, 768 KiB with K^T, as memory traffic), and
// a 30 s search timed three of them before the default.
TEST(attention_cost, RanksCacheSizedBlocksFirstOnAvx2) {
  ir::Graph g = test::parse(kM5);
  const target::Target t = zen3_avx2();
  ASSERT_EQ(t.isa.vector_bits(), 256);
  const double best = seconds(g, t, 64, 64);
  for (auto [bq, bk] : {std::pair<int64_t, int64_t>{256, 256}, {256, 128}, {256, 512}, {128, 256}, {64, 128}, {64, 256}})
    EXPECT_LT(best, seconds(g, t, bq, bk)) << bq << " x " << bk;
  // Past L2 (256 x 256: 512 KiB a key step) well behind.
  EXPECT_GT(seconds(g, t, 256, 256), 1.1 * best);
  // Small query blocks read the keys from L2 once per 4 or 8 rows.
  EXPECT_LT(best, seconds(g, t, 8, 64));
  EXPECT_LT(best, seconds(g, t, 4, 64));
}

}  // namespace
}  // namespace axon
