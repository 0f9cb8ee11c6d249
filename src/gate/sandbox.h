// Running untrusted executables: each in a child process of its own process
// group, with resource limits and a watchdog, so that a crash, a hang or a
// runaway allocation ends the child and never axon.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace axon::gate {

struct SandboxLimits {
  int64_t address_space_bytes = 0;  // RLIMIT_AS; 0: unlimited
  int64_t cpu_seconds = 0;          // RLIMIT_CPU (SIGXCPU, then SIGKILL 5 s later); 0: unlimited
  int64_t file_size_bytes = 0;      // RLIMIT_FSIZE; 0: unlimited
  /// Kill the group when `progress_file` has not grown for this long (the
  /// driver appends a line per call); 0: no idle watchdog.
  double idle_timeout_s = 0;
  std::string progress_file;
  /// Kill the group after this long in all; 0: none.
  double wall_timeout_s = 0;
  /// When set, the wall timeout counts from the moment this file exists
  /// (relative to the child's working folder): a child that waits for it
  /// (the gate's hold) is not charged for the wait, and what it does before
  /// is bounded by the idle timeout alone.
  std::string wall_clock_file;
};

struct SandboxResult {
  bool started = false;
  bool exited = false;  // exited normally with exit_code
  int exit_code = -1;
  int signal = 0;       // the signal that ended it, when !exited
  bool killed_idle = false, killed_wall = false;  // by the watchdog (SIGKILL)
  double wall_s = 0;
  std::string start_error;
  /// "exit 0", "signal 11 (SIGSEGV)", "killed after 10.0 s without progress", ...
  std::string describe() const;
};

/// Runs argv[0] (a path) with `env`, in `cwd`, stdin from /dev/null and
/// stdout and stderr appended to `log_path`. Waits for it, enforcing the
/// limits; when it ends, whatever is left of its process group is killed.
/// Safe to call while other threads of axon run (only async-signal-safe
/// calls between fork and exec).
SandboxResult run_sandboxed(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                            const std::string& cwd, const std::string& log_path, const SandboxLimits& limits);

/// "SIGSEGV" for 11, etc.; "signal N" when unknown.
std::string signal_name(int sig);

/// The current environment without the variables that change how a kernel
/// or its OpenMP runtime behaves behind the gate's back (LD_PRELOAD,
/// OMP_WAIT_POLICY, GOMP_SPINCOUNT, *SAN_OPTIONS), plus `extra` ("K=V", each replacing
/// the variable K if the environment has it).
std::vector<std::string> child_environment(const std::vector<std::string>& extra);

}  // namespace axon::gate
