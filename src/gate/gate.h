// The gate: judges a kernel that someone else wrote against a spec
// (docs/gate.md). The kernel is C++ source implementing the spec's entry
// with the C ABI of kernel.h (codegen/c_like/kernel_abi.h). It is compiled
// together with a driver that axon generates into standalone executables
// (one optimised, one with AddressSanitizer and UndefinedBehaviorSanitizer),
// which run in child processes under resource limits, so nothing the kernel
// does can crash or corrupt axon. The battery of calls, its inputs and the
// reference are axon's alone; docs/gate.md lists every check.
//
/// verify_kernel never throws because of what the kernel does: every
/// misbehaviour becomes a Reason in the report. It throws
/// axon::InternalError when the gate itself cannot do its job (no compiler,
/// no temporary folder, a driver that breaks its protocol).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

#ifndef AXON_DEFAULT_CXX  // CMake sets it to the compiler axon itself was built with
#define AXON_DEFAULT_CXX "c++"
#endif

namespace axon::gate {

/// The stable reason codes (scripts and the gate corpus match on them).
namespace reason {
inline constexpr const char* kCompileError = "compile_error";
inline constexpr const char* kForbiddenSymbol = "forbidden_symbol";
inline constexpr const char* kCrash = "crash";
inline constexpr const char* kTimeout = "timeout";
inline constexpr const char* kMemoryLimit = "memory_limit";
inline constexpr const char* kOutOfBounds = "out_of_bounds";
inline constexpr const char* kWroteInput = "wrote_input";
inline constexpr const char* kUnwrittenOutput = "unwritten_output";
inline constexpr const char* kWrongResult = "wrong_result";
inline constexpr const char* kNondeterministic = "nondeterministic";
inline constexpr const char* kStaleState = "stale_state";
inline constexpr const char* kIgnoresInput = "ignores_input";
inline constexpr const char* kWorkAfterReturn = "work_after_return";
inline constexpr const char* kSanitizer = "sanitizer";
inline constexpr const char* kFasterThanRoofline = "faster_than_roofline";
inline constexpr const char* kOutputDependent = "output_dependent";
inline constexpr const char* kCallCountDependent = "call_count_dependent";
inline constexpr const char* kNotReentrant = "not_reentrant";
inline constexpr const char* kEnvironmentDependent = "environment_dependent";
}  // namespace reason

/// Every code above, in the order docs/gate.md describes them.
const std::vector<std::string>& all_reason_codes();

struct Reason {
  std::string code;        // one of reason::k*
  std::string message;     // one line, lower case, with the values
  nlohmann::json evidence; // an object: where and with which values
};

struct GateOptions {
  /// The battery's seed; empty: a fresh one from std::random_device.
  std::optional<uint64_t> seed;
  /// The compiler for the kernel and the driver.
  std::string cxx = AXON_DEFAULT_CXX;
  /// Longest a single call may run before the kernel is judged hung; 0:
  /// 10 s plus 1000 times the roofline floor. The sanitized build gets 3x.
  double call_timeout_s = 0;
  /// Address-space limit of the optimised run; 0: max(8 GiB, 4x the bytes
  /// the driver maps). The sanitized run is limited through ASan instead.
  int64_t memory_limit_bytes = 0;
  /// How long the soak's unrecorded calls may go on, and a fifth of it the
  /// plain process's (docs/gate.md, "Verdict time"): both plan more than a
  /// thousand calls, which a kernel slower than about 4 ms per call (1 ms
  /// in the plain process) does not reach within the default.
  double repeat_s = 5;
  bool run_sanitizer = true;
  bool time_kernel = true;
  /// Reject kernels faster than the roofline floor (needs time_kernel).
  bool check_roofline = true;
  /// Peak rates behind the floor; deliberately above any x86 core: 64 f32
  /// FLOP/cycle (two 16-lane FMA pipes), 128 B/cycle of loads, 5 GHz.
  double flops_per_cycle_per_core = 64;
  double bytes_per_cycle_per_core = 128;
  double ghz = 5;
  int cores = 0;  // 0: std::thread::hardware_concurrency()
  /// Threads evaluating the float64 reference; 0: one per core.
  int reference_threads = 0;
  /// Where the kernel, kernel.h, the driver, the binaries and the logs go;
  /// empty: a fresh folder under the system temp folder.
  std::string work_dir;
  /// Keep the work folder afterwards (always kept when work_dir is given).
  bool keep_work_dir = false;
  /// The command that reproduces this verdict, without --seed; the report
  /// appends " --seed S". Empty: no replay line.
  std::string replay_command;
};

/// One set of input tensors the battery fed to the kernel.
struct InputSet {
  std::string name;          // "normal", "normal#2", "large", "normal with b from normal#2", ...
  std::string distribution;  // verify::distribution_name of the values
  uint64_t seed = 0;         // verify::random_inputs seed of the values
  std::vector<std::string> hashes;  // fast_fingerprint of each parameter's buffer, hex
};

struct Roofline {
  double flops = 0;  // 2 per einsum multiply-add, 1 per elementwise op or reduced element
  double bytes = 0;  // every input and output buffer once
  double floor_ms = 0;
};

struct GateReport {
  bool accepted = false;
  std::vector<Reason> reasons;  // empty when accepted
  uint64_t seed = 0;
  std::vector<std::string> distributions;  // those compared with the reference
  std::vector<InputSet> inputs;
  int64_t calls = 0;                       // kernel calls that ran to completion
  std::string kernel_sha;                  // SHA-256 of the candidate source, hex
  std::string compiler;                    // first line of `cxx --version`
  std::map<std::string, double> max_error_over_budget;  // per input set compared
  // Per input set where some element had an infinite budget (the first-order
  // bound promises nothing there, so nothing was checked): the largest
  // fraction of an output's elements, over the calls and outputs.
  std::map<std::string, double> unbounded_fraction;
  std::optional<double> time_ms;           // median, optimised build, normal inputs
  double time_min_ms = 0, time_max_ms = 0;
  int time_reps = 0;
  Roofline roofline;
  std::string replay;   // replay_command + " --seed S"
  std::string work_dir; // empty when it was removed
  std::vector<std::string> notes;  // checks skipped and why
  /// Wall seconds of the verdict's phases ("preprocess", "plan",
  /// "compile", "symbols", "link", "plan_and_build", "sanitized_run",
  /// "race_run", "first_runs", "fills_wait", "user_run", "user_wait",
  /// "references", "reference_wait", "optimised_run", "held",
  /// "optimised_wait", "judge", "total"; docs/gate.md, "The report").
  /// "references" runs beside the build and the runs, and
  /// "reference_wait" is the part of it the verdict waited for; the
  /// optimised run starts beside the user run, and "held" is how long its
  /// driver waited for that run and the references to end.
  std::vector<std::pair<std::string, double>> phases_s;

  bool has_reason(const std::string& code) const;
};

GateReport verify_kernel(const ir::Graph& g, const std::string& kernel_source, const GateOptions& opts = {});

}  // namespace axon::gate
