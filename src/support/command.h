// Running trusted tools (the compiler, nm, objdump) and collecting their
// output. Untrusted programs go through gate/sandbox.h instead.
//
// run_command(argv, cwd) starts argv[0], looked up in PATH, without a shell,
// with this process's environment, in `cwd` (empty: the current folder),
// on the CPUs the process started with (support/affinity.h), and waits for
// it. Its stdout and stderr are captured together, interleaved in the order
// written; nothing reaches the caller's terminal. The result says how it
// ended:
//   exited with code c     status = c,  how = "exit c"
//   killed by signal s     status = -1, how = "signal s"
//   could not be started   status = -1, how = "could not start: <reason>"
//                          (no such program, a missing cwd, no pipe),
//                          output empty
// It never throws for the program's failure; callers decide what a
// non-zero status means.
#pragma once

#include <string>
#include <vector>

namespace axon::support {

struct CommandResult {
  int status = -1;     // exit status, or -1 when it did not exit normally
  std::string how;     // "exit 1", "signal 9", "could not start: ..."
  std::string output;  // stdout and stderr, interleaved
  bool ok() const { return status == 0; }
};

CommandResult run_command(const std::vector<std::string>& argv, const std::string& cwd = "");

/// argv joined by spaces, for logs and messages.
std::string command_line(const std::vector<std::string>& argv);

/// The first `n` lines of `text` (a command's output), with a note when more
/// were cut.
std::string first_lines(const std::string& text, int n);

}  // namespace axon::support
