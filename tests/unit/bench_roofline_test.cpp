// The bench's roofline: fractions against the bandwidth ceiling (the best
// real traffic of the probe's loops, not the plain triad as STREAM counts
// it), and a contender above 1.05 of the ceiling flagged as an anomaly.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bench/bench.h"
#include "target/target.h"

namespace axon {
namespace {

using nlohmann::json;

target::Peaks peaks() {
  target::Peaks p;
  p.fma_gflops_all = 100;
  p.stream_gbs_all = 30;    // 40 GB/s counting the lines its stores read
  p.read_gbs_all = 45;
  p.nt_copy_gbs_all = 50;   // the ceiling
  p.nt_triad_gbs_all = 48;
  return p;
}

TEST(bench_roofline, TheCeilingIsTheBestRealTrafficOfTheProbesLoops) {
  target::Peaks p = peaks();
  EXPECT_DOUBLE_EQ(target::bandwidth_ceiling_gbs(p), 50);
  p.nt_copy_gbs_all = 0;
  EXPECT_DOUBLE_EQ(target::bandwidth_ceiling_gbs(p), 48);
  // A description with only the triad: its rate with the write-allocate reads.
  target::Peaks old;
  old.stream_gbs_all = 30;
  EXPECT_DOUBLE_EQ(target::bandwidth_ceiling_gbs(old), 40);
  EXPECT_DOUBLE_EQ(target::bandwidth_ceiling_gbs(target::Peaks{}), 0);
}

TEST(bench_roofline, FractionsAreOfTheCeilingAndAboveItIsAnAnomaly) {
  // 100 MB moved, 1 MFLOP: memory-bound; the floor is 100 MB / 50 GB/s = 2 ms.
  json w = {{"flops", 1e6},
            {"bytes", 1e8},
            {"axon", {{"status", "ok"}, {"ms", 2.5}}},
            {"naive", {{"status", "ok"}, {"ms", 40.0}}},
            {"peers", {{"numpy", {{"status", "ok"}, {"median_ms", 1.8}}}, {"jax", {{"status", "failed: x"}}}}}};
  bench::apply_roofline(w, peaks());
  EXPECT_EQ(w["bound"], "memory");
  EXPECT_NEAR(w["floor_ms"].get<double>(), 2.0, 1e-12);
  EXPECT_NEAR(w["axon"]["fraction"]["bandwidth"].get<double>(), 0.8, 1e-12);
  EXPECT_NEAR(w["axon"]["fraction"]["roofline"].get<double>(), 0.8, 1e-12);
  // numpy at 1.8 ms is 1.11 of the ceiling: flagged; axon (0.8) and the
  // naive kernel are not, nor a peer that was not timed.
  ASSERT_TRUE(w.contains("anomalies")) << w.dump();
  ASSERT_EQ(w["anomalies"].size(), 1u) << w.dump();
  EXPECT_EQ(w["anomalies"][0].get<std::string>().rfind("numpy at 1.11 of the bandwidth ceiling (50.0 GB/s)", 0), 0u)
      << w.dump();

  // Remeasured with better peaks (the run's end): the flag goes.
  target::Peaks faster = peaks();
  faster.nt_copy_gbs_all = 60;
  bench::apply_roofline(w, faster);
  EXPECT_FALSE(w.contains("anomalies")) << w.dump();
  EXPECT_NEAR(w["peers"]["numpy"]["fraction"]["bandwidth"].get<double>(), 1e8 / 1.8e-3 / 60e9, 1e-12);
}

}  // namespace
}  // namespace axon
