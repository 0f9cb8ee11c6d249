// `axon bench`: axon's kernel, the naive kernel and the peers (numpy,
// PyTorch eager, torch.compile, JAX jit) timed side by side in one run, each
// against the roofline floor measured in that same run (docs/bench.md).
//
/// Per workload: optimize (optimize::optimize, the tuning database makes a
/// rerun fast), then time axon's winner and the naive kernel with cold
/// inputs (runtime::Measurer with cold_bytes = target::cold_rotation_bytes:
/// enough copies of every buffer are rotated that no call finds its inputs
/// in cache), then run bench/harness/peers.py on the same inputs with the
/// same rotation, then time axon's winner once more (A/B/A): its reported
/// ms is the slower of its medians before and after the peers, so a claim
/// against a peer never rests on axon's luckier timing. With rounds N > 1
/// the peers and axon's second timing repeat N times (A/B/A/B/A...), and
/// every contender's ms is the median of its round medians. The hardware probe
/// (target::measure_peaks) runs once, at the start. A peer that is missing
/// or fails keeps its row, with its status; a workload that fails keeps its
/// row, with the error. Each workload runs in a child process
/// (support/in_child.h), so one that crashes (a signal in the search or in
/// a kernel) keeps its row too, saying how its process ended. With ablate_rewrites, optimize runs a second time
/// with rewrites off (same budget, same seed), and both winners are timed in
/// the same Measurer, interleaved with the naive kernel, so
/// "rewrites_speedup" is a ratio from one run (the before-peers pair).
/// Results are written after every workload, so an interrupted run leaves
/// what it finished.
#pragma once

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "frontend/spec.h"
#include "optimize/optimize.h"

namespace axon::bench {

struct BenchOptions {
  std::vector<std::string> specs;   // workload spec files, in order
  std::string out_dir = "bench/out";
  double budget_s = 60;             // optimize's search budget per workload
  // torch.sdpa: PyTorch's fused attention, on the programs it has a form of
  // (bench/harness/torch_sdpa.py); "not applicable" on the others.
  std::vector<std::string> peers = {"numpy", "torch", "torch.compile", "jax", "torch.sdpa"};
  std::string db_path;              // empty: the default tuning database
  bool use_db = true;
  double min_seconds = 0.2;         // timed seconds per kernel and per peer, at least
  int rounds = 1;                   // peers-then-axon rounds after axon's first timing
  int interleave_rounds = 7;        // per peers run: bursts of axon's kernel and every peer in turn (0: none)
  double burst_seconds = 0.03;      // one interleaved burst: at least 3 calls and this long
  double burst_gap_s = 0.15;        // sleep before each burst, for the last contender's spinning threads to park
  std::string target_file;          // JSON override of the detected target (peaks are probed anyway)
  std::string python = "python3";   // runs peers.py and plot.py
  std::string harness_dir;          // holds peers.py and plot.py; empty: found (see find_harness_dir)
  bool ablate_rewrites = false;     // also optimize without rewrites and time both winners side by side
  std::string command;              // the command line, recorded in the outputs
  const std::atomic<bool>* interrupt = nullptr;     // set (SIGINT): stop after the current step
  std::function<void(const std::string&)> on_line;  // progress lines (one per workload and step)
  /// With one spec: bench this result of optimize (`axon optimize --peers`)
  /// instead of searching again.
  const optimize::OptimizeResult* searched = nullptr;
  frontend::SpecOptions spec_options;  // how each spec is read (entry, -D bindings)
};

/// The default workload list: every bench/workloads/*.py, sorted by name,
/// looked up from the current directory, $AXON_SOURCE_DIR and the folders
/// above the running executable. Empty when none is found.
std::vector<std::string> default_specs();

/// bench/harness (with peers.py) under $AXON_BENCH_HARNESS, $AXON_SOURCE_DIR,
/// the current directory or the folders above the executable; "" if none.
std::string find_harness_dir();

/// Runs the bench and writes bench.json, bench.csv, bench.md and bench.png
/// (when matplotlib is there) into opts.out_dir. Returns the bench.json
/// object. Throws axon::Diagnostic when out_dir cannot be written.
nlohmann::json run_bench(const BenchOptions& opts);

/// Sets a workload row's floor_ms, bound and every "fraction" (axon, naive,
/// axon_no_rewrites, each timed peer, the interleaved axon time) from its
/// "flops" and "bytes" and the peaks `p`, against the FMA peak and
/// target::bandwidth_ceiling_gbs(p); lists in "anomalies" every contender
/// above 1.05 of the ceiling (erased when none is). With "bytes_written",
/// also "mix_ceiling" (the probe loop nearest the workload's share of
/// written bytes, target::bandwidth_ceiling_of_mix) and each fraction's
/// "bandwidth_of_mix" against it.
void apply_roofline(nlohmann::json& w, const target::Peaks& p);

/// The Markdown page of a bench.json object (the table, the probe, notes).
std::string bench_markdown(const nlohmann::json& bench);
/// One CSV row per workload, with a header.
std::string bench_csv(const nlohmann::json& bench);

}  // namespace axon::bench
