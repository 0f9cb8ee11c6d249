// The autotuner: cost-model-guided enumeration of a schedule space, then
// Markov-chain Monte Carlo refinement on measured time (STOKE's search,
// over schedules instead of instruction sequences).
//
/// Knobs are opaque: the search only reads Space (names, legal values) and
/// calls the functions it is given. Contract:
///  - deterministic given `seed` and the evaluator's answers (no pointer-keyed
///    iteration; candidates sorted by a stable key);
///  - an illegal point (legal() non-empty) is never evaluated;
///  - a point whose Evaluation is not ok is never accepted, never the best,
///    and never returned as the winner (found == false when none was ok);
///  - stops with one of "budget", "trials", "space exhausted", "interrupted".
/// Phase 1 enumerates the whole space when it is small, else samples it and
/// lets the sample's top points climb on the model (moves of one or two
/// knobs to any value, while the prediction improves), ranks the legal
/// points by predicted time and evaluates the default point
/// (values[0] of every knob) and then the top ones. The first batch is
/// evaluated even when the budget is already spent (zero), so that a search
/// given no time still reports a measured point; only an interrupt skips it.
/// Phase 2 proposes a change of one or two knobs (to a neighbouring value or
/// a random one), evaluates it, and accepts it by the Metropolis rule on
/// log time: always when faster, else with probability
/// exp(-(log t_new - log t_cur) / temperature).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "schedule/schedule.h"

namespace axon::search {

struct Evaluation {
  bool ok = false;  // compiled and verified
  double ms = 0;    // meaningful when ok
};

struct Trial {
  schedule::Schedule schedule;
  Evaluation eval;
};

struct SearchFunctions {
  /// Empty when legal (schedule::why_illegal).
  std::function<std::string(const schedule::Schedule&)> why_illegal;
  /// The cost model (schedule::predicted_seconds), used only for ranking.
  std::function<double(const schedule::Schedule&)> predicted_seconds;
  /// Measures a batch (compiled in parallel by the caller); one answer each.
  std::function<std::vector<Evaluation>(const std::vector<schedule::Schedule>&)> evaluate;
  /// After each evaluated candidate (for progress lines); may be empty.
  std::function<void(const Trial&, const Trial* best)> on_trial;
};

struct SearchOptions {
  double budget_s = 60;   // wall clock, checked between batches
  int trials = 0;         // most evaluations; 0: no limit
  uint64_t seed = 1;
  int enumerate_limit = 4096;  // enumerate every point of spaces up to this size, else sample this many
  int top_k = 8;          // points of phase 1 that are measured
  /// Predictions spent climbing from the sample's top points on the model
  /// (spaces too large to enumerate); a count, not a time, so that the search
  /// stays deterministic.
  int64_t model_climb_limit = 20000;
  int batch = 2;          // candidates proposed and measured together in phase 2
  double temperature = 0.05;  // on natural-log time
  /// Already measured points (a resumed search): not measured again; the best
  /// ok one seeds the chain.
  std::vector<Trial> prior;
  const std::atomic<bool>* interrupt = nullptr;
};

struct SearchResult {
  bool found = false;     // some evaluated point was ok
  Trial best;
  std::vector<Trial> history;  // every evaluation of this run, in order
  std::string stop_reason;
  double seconds = 0;
};

SearchResult autotune(const schedule::Space& space, const SearchFunctions& fns, const SearchOptions& opts);

/// A stable text key of a schedule (its JSON), for sorting and deduplication.
std::string schedule_key(const schedule::Schedule& s);

}  // namespace axon::search
