// `axon optimize`: from a graph to the fastest verified kernel axon can
// find on a target (docs/optimize.md).
//
/// The search enumerates the schedule space guided by the cost model, then
/// refines by Markov-chain Monte Carlo on measured time; every candidate is
/// compiled (in parallel, cached), checked against the float64 reference
/// under the error budget before it is timed, and timed with warm-up,
/// repetitions and pinned threads. Results are stored in the tuning
/// database, so a repeated call answers from it at once.
///
/// With `rewrites`, the proved algebraic rewrites (rewrite/explore, a small
/// share of the budget) come first: the original graph and the few variants
/// the schedule cost model ranks best (a variant with a non-empty schedule
/// space where the original's is empty included) are each searched with the
/// same autotuner, sharing the budget and the trials. Every candidate of
/// every variant is checked against the float64 reference of the ORIGINAL
/// graph under the original's error budget; a variant whose C ABI (entry,
/// parameter names and types, output types) differs is never searched. The
/// fastest verified kernel over all variants wins; the report lists the
/// rewrites that produced it, each with its proof, and the database stores
/// the rule sequence so that an answer from it rebuilds the same graph.
///
/// Failures are contained: a stage that fails on this program (the rewrite
/// exploration, one variant's schedule space or search, one candidate's
/// code generation or compilation, the final side-by-side round) is
/// reported through `on_warning` and in the report's "warnings", skipped,
/// and the search goes on without it. The naive kernel is the baseline, not
/// a judge: when it misses its own error budget (or cannot be built) the
/// warning names the worst element, and the fastest kernel that passes
/// wins. Only when no kernel at all passes is `found` false: no kernel,
/// `failure` names the output, the element and the budget missed (the CLI
/// exits with 3). optimize() throws only for what no search can survive
/// (the reference cannot be evaluated, an unopenable database).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codegen/kernel_source.h"
#include "ir/graph.h"
#include "schedule/schedule.h"
#include "target/target.h"

namespace axon::optimize {

struct Progress {
  int tried = 0, compiled = 0, verified = 0;
  double best_ms = 0, naive_ms = 0;  // 0: not measured yet
  double elapsed_s = 0;
};

struct OptimizeOptions {
  target::Target target;
  double budget_s = 180;        // wall-clock limit of the search
  int trials = 0;               // most candidates to measure; 0: no limit
  uint64_t seed = 1;            // the search's randomness (not the check's)
  std::string db_path;          // empty: the default database file
  bool use_db = true;           // false: neither read nor write the database
  bool resume = false;          // continue a stored search instead of answering from it
  bool rewrites = true;         // search proved rewrites of the graph too (false: --no-rewrites)
  int rewrite_variants = 2;     // most rewritten variants searched besides the original
  std::function<void(const Progress&)> on_progress;  // called after each candidate
  std::function<void(const std::string&)> on_warning;  // called once per contained failure, as it happens
  const std::atomic<bool>* interrupt = nullptr;     // set (e.g. by SIGINT): stop, keep the best so far
};

struct OptimizeResult {
  /// False when no kernel passed its check, the naive one included: `kernel`
  /// is empty and `failure` says which output and element missed which budget.
  bool found = true;
  std::string failure;
  std::vector<std::string> warnings;  // every contained failure, in order (also report["warnings"])
  codegen::KernelSource kernel;    // the winner (the naive kernel if nothing beat it)
  schedule::Schedule schedule;
  double axon_ms = 0, naive_ms = 0;
  bool from_db = false;
  std::string stop_reason;         // "budget", "trials", "space exhausted", "interrupted", "database"
  nlohmann::json report;           // the report.json object (see docs/optimize.md)
};

OptimizeResult optimize(const ir::Graph& g, const OptimizeOptions& opts);

/// report.md: the report object as a short Markdown page.
std::string report_markdown(const nlohmann::json& report);

}  // namespace axon::optimize
