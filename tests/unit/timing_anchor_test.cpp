// The anchored timing of a search (optimize/timing_anchor.h and
// runtime::Measurer::measure with an anchor): candidates checked before they
// are timed, timed beside the anchor, and their times read in the machine's
// state of the anchor's first batch. The machine's speed is simulated with
// kernels that sleep for a time scaled by $AXON_TEST_SLOWDOWN.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cpu_test_support.h"
#include "optimize/timing_anchor.h"
#include "runtime/measure.h"

namespace axon {
namespace {

const char* kSpec = "def f(X: \"f32[16]\"):\n    return X * 2.0\n";

// A kernel of kSpec that writes `factor` * X (2 is right) and sleeps `us`
// microseconds times $AXON_TEST_SLOWDOWN per call.
codegen::KernelSource sleeper(const std::string& entry, int us, float factor) {
  codegen::KernelSource k;
  k.entry = entry;
  k.header = "#pragma once\n#ifdef __cplusplus\nextern \"C\" {\n#endif\nvoid " + entry +
             "(const float* X, float* out0);\n#ifdef __cplusplus\n}\n#endif\n";
  k.source = "#include \"kernel.h\"\n#include <chrono>\n#include <cstdlib>\n#include <thread>\n"
             "extern \"C\" void " + entry + "(const float* X, float* out0) {\n"
             "  for (int i = 0; i < 16; ++i) out0[i] = " + std::to_string(factor) + "f * X[i];\n"
             "  const char* s = std::getenv(\"AXON_TEST_SLOWDOWN\");\n"
             "  const double slow = s ? std::atof(s) : 1.0;\n"
             "  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long>(" + std::to_string(us) +
             " * slow)));\n}\n";
  return k;
}

runtime::Measurement timed(double ms) {
  runtime::Measurement m;
  m.compiled = m.verified = true;
  m.ms = m.min_ms = m.max_ms = ms;
  return m;
}

TEST(timing_anchor, ScalesVerifiedTimesByTheAnchorsSpeed) {
  optimize::TimingAnchor a;
  EXPECT_FALSE(a.set());
  std::vector<runtime::Measurement> first = {timed(3.0), timed(2.0), runtime::Measurement{}};
  a.choose({sleeper("a", 1, 2), sleeper("b", 1, 2), sleeper("c", 1, 2)}, {{}, {}, {}}, first, 1);
  ASSERT_TRUE(a.set());
  EXPECT_EQ(a.kernel().entry, "b");  // the fastest verified one
  EXPECT_DOUBLE_EQ(a.first_ms(), 2.0);

  // The machine is 1.5x slower: the anchor takes 3 ms, a candidate 4.5 ms.
  std::vector<runtime::Measurement> later = {timed(4.5), runtime::Measurement{}};
  runtime::Timing now{3.0, 3.0, 3.0, 10};
  a.scale(later, now);
  EXPECT_DOUBLE_EQ(later[0].ms, 3.0);
  EXPECT_DOUBLE_EQ(later[0].min_ms, 3.0);
  EXPECT_EQ(later[1].ms, 0.0);  // not verified: left alone
  EXPECT_EQ(a.batches(), 1);
  EXPECT_DOUBLE_EQ(a.slowest(), 1.5);
  EXPECT_DOUBLE_EQ(a.fastest(), 1.5);

  // A batch whose anchor was not timed is left as measured and not counted.
  std::vector<runtime::Measurement> untimed = {timed(4.5)};
  a.scale(untimed, runtime::Timing{});
  EXPECT_DOUBLE_EQ(untimed[0].ms, 4.5);
  EXPECT_EQ(a.batches(), 1);

  // Faster than at first.
  std::vector<runtime::Measurement> fast = {timed(1.0)};
  a.scale(fast, runtime::Timing{1.0, 1.0, 1.0, 10});
  EXPECT_DOUBLE_EQ(fast[0].ms, 2.0);
  EXPECT_DOUBLE_EQ(a.fastest(), 0.5);
  EXPECT_DOUBLE_EQ(a.slowest(), 1.5);
  EXPECT_EQ(a.to_json()["batches"], 2);
}

TEST(timing_anchor, ABatchWithoutAVerifiedKernelChoosesNoAnchor) {
  optimize::TimingAnchor a;
  a.choose({sleeper("a", 1, 2)}, {{}}, {runtime::Measurement{}}, 0);
  EXPECT_FALSE(a.set());
  EXPECT_EQ(a.to_json()["set"], false);
}

// Measured on real kernels: a candidate that fails its check is never timed,
// and the candidates' times survive a machine that slows down 3x between
// batches, where unanchored times would not.
TEST(timing_anchor, MeasurerTimesCandidatesBesideTheAnchor) {
  ASSERT_TRUE(test::kGompPinned);
  ir::Graph g = test::parse(kSpec);
  runtime::MeasureOptions mo;
  mo.min_seconds = 0.03;
  runtime::Measurer m(g, mo);
  setenv("AXON_TEST_SLOWDOWN", "1", 1);
  codegen::KernelSource anchor_k = sleeper("anchor_k", 1000, 2), cand = sleeper("cand", 2000, 2),
                        wrong = sleeper("wrong", 1000, 3);
  std::vector<runtime::Measurement> first = m.measure({anchor_k});
  ASSERT_TRUE(first[0].verified) << first[0].error;
  optimize::TimingAnchor a;
  a.choose({anchor_k}, {{}}, first, 0);
  ASSERT_TRUE(a.set());

  setenv("AXON_TEST_SLOWDOWN", "3", 1);
  runtime::Timing now;
  std::vector<runtime::Measurement> later = m.measure({wrong, cand}, a.kernel(), &now);
  unsetenv("AXON_TEST_SLOWDOWN");
  EXPECT_FALSE(later[0].verified);
  EXPECT_EQ(later[0].ms, 0.0);
  EXPECT_EQ(later[0].reps, 0);
  ASSERT_TRUE(later[1].verified) << later[1].error;
  EXPECT_GE(later[1].reps, runtime::kAnchorRounds * 3);
  ASSERT_GT(now.reps, 0);
  EXPECT_GT(now.median_ms / first[0].ms, 2.0);  // the machine did slow down
  EXPECT_GT(later[1].ms, 5.0);                  // 2 ms x 3, as measured
  a.scale(later, now);
  // Twice the anchor's first time, within sleep's overshoot.
  EXPECT_NEAR(later[1].ms / a.first_ms(), 2.0, 0.3);
}

}  // namespace
}  // namespace axon
