// The measurement harness of the search (docs/optimize.md, "What happens"):
// compiles candidate kernels in parallel, checks each against the float64
// reference under the error budget, and only then times it.
//
/// Contract: a candidate that does not compile or fails its check is never
/// timed (ms stays 0, verified false), so it can never win. The reference
/// and its bounds are computed once, when the Measurer is built, for
/// `check_inputs` seeded random inputs, and reused for every candidate.
/// Timing: warm-up, then repetitions until both a count and a duration are
/// reached, median and spread; when the working set fits in the last-level
/// cache several copies of the buffers are rotated so that one copy is not
/// kept hot by the timing loop alone. With `cold_bytes` set, enough copies
/// (inputs and outputs together, at least 2) are rotated that their bytes
/// reach it, so that no call finds its inputs in cache (`axon bench`'s cold
/// inputs). OpenMP threads are pinned (OMP_PROC_BIND=close,
/// OMP_PLACES=cores unless already set) before the first kernel is loaded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel_source.h"
#include "ir/graph.h"
#include "runtime/time_calls.h"
#include "target/target.h"
#include "verify/interpreter.h"

namespace axon::runtime {

struct MeasureOptions {
  int jobs = 2;                // parallel compiles
  int check_inputs = 2;        // random inputs each candidate is checked on
  uint64_t check_seed = 1;     // seed of the first one (then +1, +2, ...)
  /// Added to every floating-point input value (then rounded to its
  /// dtype): 1000 gives the gate's large_mean inputs, on which a rewrite
  /// that cancels large terms shows its error.
  double input_offset = 0;
  int warmup = 2, min_reps = 5;
  double min_seconds = 0.1;    // timed seconds per candidate, at least
  std::vector<std::string> flags;  // compiler flags (CompileOptions::flags); empty: the default
  /// > 0: cold inputs: rotate among the fewest copies of all buffers (at
  /// least 2) whose bytes together reach this (target::cold_rotation_bytes,
  /// the stream probe's working set). 0: the search's rule (4 copies when
  /// they fit in 8 MiB, else 1).
  double cold_bytes = 0;
};

struct Measurement {
  bool compiled = false, verified = false;
  std::string error;                 // why not compiled / not verified, one line
  double max_error_over_budget = 0;  // worst over outputs and inputs
  double ms = 0, min_ms = 0, max_ms = 0;  // 0 unless verified
  int reps = 0;
  int copies = 0;                    // buffer sets rotated while timing (0 unless timed)
  double compile_seconds = 0;
};

/// Sets OMP_PROC_BIND=close and OMP_PLACES=cores unless already set. Call
/// before the first OpenMP kernel is loaded into the process.
void pin_openmp_threads();

/// Alternating rounds of an anchored batch (Measurer::measure with an anchor).
inline constexpr int kAnchorRounds = 4;

class Measurer {
 public:
  Measurer(const ir::Graph& g, MeasureOptions opts);
  /// Compiles all of `ks` (opts.jobs at a time), then checks and times each
  /// in order. One result per kernel.
  std::vector<Measurement> measure(const std::vector<codegen::KernelSource>& ks) const;
  /// As measure(), but the kernels that pass their check are timed side by
  /// side with `anchor` (a kernel that passed before), in kAnchorRounds
  /// alternating rounds, min_seconds of calls each in all; the anchor's own
  /// timing goes to `*anchor_timing` (reps == 0 when nothing was timed).
  /// A search divides every time by the anchor's of the same batch, so that
  /// times taken minutes apart, in different states of a shared machine,
  /// can still be compared.
  std::vector<Measurement> measure(const std::vector<codegen::KernelSource>& ks, const codegen::KernelSource& anchor,
                                   Timing* anchor_timing) const;
  /// Times kernels that already passed measure()'s check side by side:
  /// `rounds` rounds, each giving every kernel a turn of calls (the order
  /// reversed every other round) on one shared set of rotated buffers, so a
  /// slow period of a shared machine falls on all of them alike rather than
  /// on whichever was timed then. Each kernel's median, min and max over all
  /// its calls; a kernel that fails to compile or load gets reps == 0.
  /// Each kernel gets `seconds_each` of timed calls in all (<= 0: twice
  /// max(min_seconds, 0.1)), in slices of seconds_each / rounds.
  std::vector<Timing> time_side_by_side(const std::vector<codegen::KernelSource>& ks, int rounds = 6,
                                        double seconds_each = 0) const;
  /// Checks without timing (re-verifying a stored winner).
  Measurement check_only(const codegen::KernelSource& k) const;
  int inputs_tried() const { return static_cast<int>(inputs_.size()); }
  double reference_seconds() const { return reference_seconds_; }
  /// The check inputs, the float64 reference and its error bounds of input
  /// set `s` (0 is also the one timed), one tensor per parameter / output.
  const std::vector<ir::Tensor>& inputs(int s) const { return inputs_.at(s); }
  const std::vector<ir::Tensor>& reference(int s) const { return reference_.at(s); }
  const std::vector<ir::Tensor>& bounds(int s) const { return bounds_.at(s); }

 private:
  Measurement check_and_time(const std::string& so, const std::string& entry, bool time) const;
  /// Checks (and with `time`, times) each kernel whose library is not "",
  /// in order, into out[i] (keeping its compile_seconds).
  void check_each(const std::vector<codegen::KernelSource>& ks, const std::vector<std::string>& libs, bool time,
                  std::vector<Measurement>& out) const;
  /// Compiles `ks` in parallel (opts.jobs at a time): the libraries, "" with
  /// the error in out[i] where one failed.
  std::vector<std::string> compile_all(const std::vector<codegen::KernelSource>& ks, std::vector<Measurement>& out) const;
  /// How many buffer sets timing rotates through (see MeasureOptions::cold_bytes).
  int timing_copies() const;
  const ir::Graph& g_;
  MeasureOptions opts_;
  std::vector<std::vector<ir::Tensor>> inputs_, reference_, bounds_;
  double reference_seconds_ = 0;
};

}  // namespace axon::runtime
