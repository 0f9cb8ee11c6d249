// The tuning database: candidates and reports round-trip, keys separate by
// target fingerprint and compiler, best() picks the fastest verified row,
// and a reopened file still holds what a search stored (what --resume reads).
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include "support/diagnostic.h"
#include "tuning/tuning_db.h"

namespace {

using namespace axon::tuning;
namespace fs = std::filesystem;

std::string temp_db(const char* name) {
  fs::path p = fs::temp_directory_path() / ("axon_tuning_test_" + std::to_string(getpid())) / name;
  fs::remove(p);
  return p.string();
}

const TuningKey kKey{"abc f32[4]", "cpu-a;avx2", "g++ 12"};

TEST(tuning_db, round_trip) {
  std::string path = temp_db("round_trip.sqlite");
  {
    TuningDb db(path);
    db.record_candidate(kKey, {"{\"k0.mr\":4}", 2.5, true});
    db.record_candidate(kKey, {"{\"k0.mr\":8}", 1.5, true});
    db.record_candidate(kKey, {"{\"k0.mr\":16}", 0.5, false});  // faster but failed its check
    db.store_report(kKey, "{\"x\":1}");
  }
  TuningDb db(path);  // reopened: what a resumed search sees
  auto all = db.candidates(kKey);
  ASSERT_EQ(all.size(), 3u);
  auto best = db.best(kKey);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->schedule_json, "{\"k0.mr\":8}");
  EXPECT_DOUBLE_EQ(best->ms, 1.5);
  EXPECT_EQ(db.report(kKey).value_or(""), "{\"x\":1}");
}

TEST(tuning_db, same_schedule_replaces) {
  TuningDb db(temp_db("replace.sqlite"));
  db.record_candidate(kKey, {"{}", 3, true});
  db.record_candidate(kKey, {"{}", 2, true});
  auto all = db.candidates(kKey);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_DOUBLE_EQ(all[0].ms, 2);
}

TEST(tuning_db, keys_separate_by_target_and_compiler) {
  TuningDb db(temp_db("keys.sqlite"));
  db.record_candidate(kKey, {"{}", 1, true});
  db.store_report(kKey, "{}");
  TuningKey other_target = kKey, other_compiler = kKey, other_shape = kKey;
  other_target.target = "cpu-b;avx512f";
  other_compiler.compiler = "clang 16";
  other_shape.graph = "abc f32[8]";
  for (const TuningKey& k : {other_target, other_compiler, other_shape}) {
    EXPECT_TRUE(db.candidates(k).empty());
    EXPECT_FALSE(db.best(k).has_value());
    EXPECT_FALSE(db.report(k).has_value());
  }
}

TEST(tuning_db, unopenable_path_names_it) {
  try {
    TuningDb db("/proc/axon-no-such-dir/tuning.sqlite");
    FAIL() << "expected a Diagnostic";
  } catch (const axon::Diagnostic& d) {
    EXPECT_NE(std::string(d.what()).find("/proc/axon-no-such-dir"), std::string::npos) << d.what();
  }
}

}  // namespace
