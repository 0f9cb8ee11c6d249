// A proposer as a child process: `/bin/sh -c CMD` with a line channel on
// its stdin and stdout (docs/proposers.md). Nothing it does can stop axon:
// every wait has a deadline, writes to a child that has gone never raise
// SIGPIPE, and the whole process group is killed when the channel closes.
#pragma once

#include <string>
#include <sys/types.h>

namespace axon::propose {

class ChildProcess {
 public:
  /// Starts `/bin/sh -c command` in a process group of its own (so a
  /// Ctrl-C at the terminal reaches axon, not the proposer, and a kill
  /// reaches everything the shell started), stdin and stdout connected to
  /// axon, stderr shared with axon's, in the current folder and environment.
  /// Check started() and start_error() afterwards.
  explicit ChildProcess(const std::string& command);
  ~ChildProcess();  // finish(0)
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return pid_ > 0; }
  const std::string& start_error() const { return start_error_; }

  /// Writes `line` and a newline within `timeout_s`. False with `*error`
  /// ("it stopped reading", "it has exited") when it could not.
  bool send_line(const std::string& line, double timeout_s, std::string* error);

  enum class ReadStatus { Line, Eof, Timeout, TooLong };
  /// The next line of its stdout (without the newline), waiting at most
  /// `timeout_s`; TooLong when more than `max_bytes` arrive without one.
  ReadStatus read_line(std::string* line, double timeout_s, size_t max_bytes);

  /// How it ended: "exit 0", "signal 11 (SIGSEGV)"; waits up to `wait_s`
  /// for it to end, "still running" when it has not.
  std::string exit_status(double wait_s);

  /// Closes its stdin (the end of the conversation), gives it `grace_s` to
  /// exit, then kills its process group. Idempotent.
  void finish(double grace_s);

 private:
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  bool reaped_ = false, finished_ = false;
  int wait_status_ = 0;
  std::string buffer_;  // bytes read past the last line handed out
  std::string start_error_;
};

}  // namespace axon::propose
