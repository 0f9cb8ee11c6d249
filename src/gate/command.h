// Running trusted tools (the compiler, nm, objdump) and collecting their
// output. Untrusted programs go through sandbox.h instead.
#pragma once

#include <string>
#include <vector>

namespace axon::gate {

struct CommandResult {
  int status = -1;     // exit status, or -1 when it did not exit normally
  std::string how;     // "exit 1", "signal 9", "could not start: ..."
  std::string output;  // stdout and stderr, interleaved
  bool ok() const { return status == 0; }
};

/// Runs argv (argv[0] looked up in PATH) without a shell, in `cwd` (empty:
/// the current folder).
CommandResult run_command(const std::vector<std::string>& argv, const std::string& cwd = "");

/// argv joined by spaces, for logs and messages.
std::string command_line(const std::vector<std::string>& argv);

/// The first `n` lines of `text`, with a note when more were cut.
std::string first_lines(const std::string& text, int n);

}  // namespace axon::gate
