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

TEST(bench_roofline, TheCeilingOfAMixIsTheNearestLoopsRate) {
  target::Peaks p = peaks();  // read-only 45, triad 40 (counted at 16 bytes), streaming triad 48, streaming copy 50
  auto mix = [&](double share) { return target::bandwidth_ceiling_of_mix(p, share); };
  EXPECT_DOUBLE_EQ(mix(0.0).gbs, 45);                      // a kernel that only reads: the read-only sum
  EXPECT_STREQ(mix(0.0).loop, "read-only sum");
  EXPECT_DOUBLE_EQ(mix(0.1).gbs, 45);
  EXPECT_DOUBLE_EQ(mix(0.2).gbs, 40);                      // nearest the plain triad's 1/4
  EXPECT_DOUBLE_EQ(mix(1.0 / 3.0).gbs, 48);                // two inputs, one output of their size
  EXPECT_DOUBLE_EQ(mix(0.5).gbs, 50);                      // a copy
  EXPECT_DOUBLE_EQ(mix(0.9).gbs, 50);
  // Halfway between two loops: the faster.
  EXPECT_DOUBLE_EQ(mix(0.125).gbs, 45);
  p.read_gbs_all = 30;
  EXPECT_DOUBLE_EQ(mix(0.125).gbs, 40);
  // A loop not measured is passed over; none measured gives 0.
  p.read_gbs_all = 0;
  EXPECT_DOUBLE_EQ(mix(0.0).gbs, 40);
  EXPECT_DOUBLE_EQ(target::bandwidth_ceiling_of_mix(target::Peaks{}, 0.0).gbs, 0);
}

TEST(bench_roofline, AReadOnlyKernelIsAlsoMeasuredAgainstTheReadOnlySum) {
  // 100 MB, of which 1 MB written, in 2.5 ms: 40 GB/s, 0.8 of the best
  // ceiling (the copy's 50) and 40/45 of the read-only sum's.
  json w = {{"flops", 1e6}, {"bytes", 1e8}, {"bytes_written", 1e6}, {"axon", {{"status", "ok"}, {"ms", 2.5}}}};
  bench::apply_roofline(w, peaks());
  EXPECT_NEAR(w["axon"]["fraction"]["bandwidth"].get<double>(), 0.8, 1e-12);
  EXPECT_NEAR(w["axon"]["fraction"]["bandwidth_of_mix"].get<double>(), 40.0 / 45.0, 1e-12);
  EXPECT_EQ(w["mix_ceiling"]["loop"], "read-only sum");
  EXPECT_NEAR(w["mix_ceiling"]["write_share"].get<double>(), 0.01, 1e-12);
  // The floor and the anomaly check stay against the best ceiling.
  EXPECT_NEAR(w["floor_ms"].get<double>(), 2.0, 1e-12);
  EXPECT_FALSE(w.contains("anomalies"));
  // Without bytes_written (a row from before), no mix fraction.
  json old = {{"flops", 1e6}, {"bytes", 1e8}, {"axon", {{"status", "ok"}, {"ms", 2.5}}}};
  bench::apply_roofline(old, peaks());
  EXPECT_FALSE(old["axon"]["fraction"].contains("bandwidth_of_mix"));
  EXPECT_FALSE(old.contains("mix_ceiling"));
}

}  // namespace
}  // namespace axon
