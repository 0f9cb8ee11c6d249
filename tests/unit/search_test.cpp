// The autotuner on fake spaces with fake cost functions: deterministic by
// seed, never evaluates an illegal point, never returns a candidate that
// failed verification, honours trials and prior (resumed) points, and stops
// with "space exhausted" on a space of one point.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "search/autotune.h"

namespace {

using axon::schedule::Knob;
using axon::schedule::Schedule;
using axon::schedule::Space;
using namespace axon::search;

Space fake_space() {
  Space s;
  s.knobs.push_back(Knob{"k0.a", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, "a"});
  s.knobs.push_back(Knob{"k0.b", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, "b"});
  s.knobs.push_back(Knob{"k0.c", {0, 1, 2, 3, 4}, "c"});
  return s;
}

double fake_ms(const Schedule& s) {
  double a = static_cast<double>(s.at("k0.a")) - 7, b = static_cast<double>(s.at("k0.b")) - 3;
  return 1 + a * a + b * b + static_cast<double>(s.at("k0.c"));
}

// The fastest points fail verification: the search must not return them.
bool fails_check(const Schedule& s) { return s.at("k0.a") == 7 && s.at("k0.b") == 3; }

SearchFunctions fake_functions(int* evaluations, std::set<std::string>* evaluated = nullptr) {
  SearchFunctions f;
  f.why_illegal = [](const Schedule& s) { return s.at("k0.c") == 4 ? std::string("c = 4 is illegal") : std::string(); };
  // A deliberately imperfect model: it ignores c.
  f.predicted_seconds = [](const Schedule& s) {
    Schedule t = s;
    t["k0.c"] = 0;
    return fake_ms(t);
  };
  f.evaluate = [=](const std::vector<Schedule>& batch) {
    std::vector<Evaluation> out;
    for (const Schedule& s : batch) {
      EXPECT_NE(s.at("k0.c"), 4) << "an illegal point was evaluated";
      if (evaluations) ++*evaluations;
      if (evaluated) evaluated->insert(schedule_key(s));
      out.push_back(fails_check(s) ? Evaluation{false, 0} : Evaluation{true, fake_ms(s)});
    }
    return out;
  };
  return f;
}

SearchOptions fake_options(uint64_t seed) {
  SearchOptions o;
  o.budget_s = 60;
  o.trials = 60;
  o.seed = seed;
  o.enumerate_limit = 100;  // smaller than the space (500): phase 1 samples
  return o;
}

std::vector<std::string> keys(const SearchResult& r) {
  std::vector<std::string> k;
  for (const Trial& t : r.history) k.push_back(schedule_key(t.schedule));
  return k;
}

TEST(search, deterministic_by_seed) {
  int n = 0;
  SearchResult a = autotune(fake_space(), fake_functions(&n), fake_options(7));
  SearchResult b = autotune(fake_space(), fake_functions(&n), fake_options(7));
  SearchResult c = autotune(fake_space(), fake_functions(&n), fake_options(8));
  EXPECT_EQ(keys(a), keys(b));
  EXPECT_NE(keys(a), keys(c));
  EXPECT_EQ(a.stop_reason, "trials");
  EXPECT_EQ(a.history.size(), 60u);
}

TEST(search, never_returns_an_unverified_candidate) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    int n = 0;
    SearchResult r = autotune(fake_space(), fake_functions(&n), fake_options(seed));
    ASSERT_TRUE(r.found);
    EXPECT_TRUE(r.best.eval.ok);
    EXPECT_FALSE(fails_check(r.best.schedule));
    for (const Trial& t : r.history)
      if (t.eval.ok) EXPECT_LE(r.best.eval.ms, t.eval.ms);
  }
}

TEST(search, finds_the_best_verified_point_of_a_small_space) {
  Space s = fake_space();
  s.knobs[2].values = {0, 1};  // 200 points, all enumerable
  SearchOptions o = fake_options(3);
  o.trials = 0;
  o.enumerate_limit = 1000;
  int n = 0;
  SearchResult r = autotune(s, fake_functions(&n), o);
  EXPECT_EQ(r.stop_reason, "space exhausted");
  EXPECT_EQ(n, 200);
  // Best verified: (7, 3) fails, so a neighbour at distance 1 with c = 0.
  EXPECT_DOUBLE_EQ(r.best.eval.ms, 2);
}

TEST(search, only_failing_points_means_not_found) {
  SearchFunctions f = fake_functions(nullptr);
  f.evaluate = [](const std::vector<Schedule>& b) { return std::vector<Evaluation>(b.size(), Evaluation{false, 0}); };
  SearchOptions o = fake_options(1);
  o.trials = 20;
  SearchResult r = autotune(fake_space(), f, o);
  EXPECT_FALSE(r.found);
  EXPECT_EQ(r.history.size(), 20u);
}

TEST(search, space_of_one_point_is_exhausted_after_one_trial) {
  int n = 0;
  SearchFunctions f = fake_functions(&n);
  f.why_illegal = nullptr;
  f.predicted_seconds = nullptr;
  f.evaluate = [&n](const std::vector<Schedule>& b) {
    n += static_cast<int>(b.size());
    return std::vector<Evaluation>(b.size(), Evaluation{true, 1.5});
  };
  SearchResult r = autotune(Space{}, f, fake_options(1));
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.stop_reason, "space exhausted");
}

TEST(search, resumed_points_are_not_measured_again) {
  int n = 0;
  SearchResult first = autotune(fake_space(), fake_functions(&n), fake_options(5));
  std::set<std::string> evaluated;
  SearchOptions o = fake_options(6);
  o.prior = first.history;
  SearchResult second = autotune(fake_space(), fake_functions(&n, &evaluated), o);
  for (const Trial& t : first.history) EXPECT_EQ(evaluated.count(schedule_key(t.schedule)), 0u);
  EXPECT_LE(second.best.eval.ms, first.best.eval.ms);
}

TEST(search, spent_budget_still_measures_the_first_batch) {
  SearchOptions o = fake_options(1);
  o.budget_s = 0;
  o.trials = 0;
  o.batch = 4;
  int n = 0;
  SearchResult r = autotune(fake_space(), fake_functions(&n), o);
  EXPECT_EQ(r.stop_reason, "budget");
  EXPECT_EQ(n, 4);  // one batch, then the budget stops it
  EXPECT_TRUE(r.found);
}

// A space too large to enumerate (20^4 points) whose model optimum needs
// two knobs moved at once: a + b <= 20 is the register budget, the model
// prefers a large a * b, so from (12, 8) neither knob alone improves it
// (13 is illegal, 7 is worse) while (10, 10) does. The sample (4096 points)
// rarely holds (10, 10, 0, 0); the climb on the model must find it, and it
// must be among the first points measured.
TEST(search, phase_one_climbs_the_model_to_an_optimum_the_sample_missed) {
  Space s;
  std::vector<int64_t> v;
  for (int64_t i = 0; i < 20; ++i) v.push_back(i);
  for (const char* n : {"k0.a", "k0.b", "k0.c", "k0.d"}) s.knobs.push_back(Knob{n, v, n});
  auto predicted = [](const Schedule& p) {
    return 1000.0 - static_cast<double>(p.at("k0.a") * p.at("k0.b")) + static_cast<double>(p.at("k0.c") + p.at("k0.d"));
  };
  const Schedule optimum = {{"k0.a", 10}, {"k0.b", 10}, {"k0.c", 0}, {"k0.d", 0}};
  auto first_batch_has_optimum = [&](int64_t climb_limit) {
    SearchFunctions f;
    f.why_illegal = [](const Schedule& p) { return p.at("k0.a") + p.at("k0.b") > 20 ? std::string("a + b > 20") : std::string(); };
    f.predicted_seconds = predicted;
    f.evaluate = [&](const std::vector<Schedule>& b) {
      std::vector<Evaluation> out;
      for (const Schedule& p : b) out.push_back({true, predicted(p)});
      return out;
    };
    SearchOptions o;
    o.seed = 5;
    o.trials = 9;  // the default point and the top 8
    o.model_climb_limit = climb_limit;
    SearchResult r = autotune(s, f, o);
    EXPECT_EQ(r.history.size(), 9u);
    return std::any_of(r.history.begin(), r.history.end(), [&](const Trial& t) { return t.schedule == optimum; });
  };
  EXPECT_FALSE(first_batch_has_optimum(0)) << "the sample alone found the optimum: this test would not test the climb";
  EXPECT_TRUE(first_batch_has_optimum(SearchOptions{}.model_climb_limit));
}

TEST(search, interrupt_stops_at_once) {
  std::atomic<bool> stop{true};
  SearchOptions o = fake_options(1);
  o.interrupt = &stop;
  int n = 0;
  SearchResult r = autotune(fake_space(), fake_functions(&n), o);
  EXPECT_EQ(r.stop_reason, "interrupted");
  EXPECT_EQ(n, 0);
}

}  // namespace
