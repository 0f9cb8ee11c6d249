// Running a piece of this program in a child process, so that a crash in it
// (a signal, an abort, a kernel that writes out of bounds) ends the child
// and not the caller.
//
// in_child(work) forks; the child runs work() and sends the string it
// returns back through a pipe, then exits with _exit (no destructors of the
// parent's objects, no atexit handlers); the parent reads the string and
// waits for the child. The result says how the child ended:
//   returned            ok = true,  value = what work() returned, how = "exit 0"
//   threw               ok = false, how = "exit 3", value = the exception's what()
//   killed by a signal  ok = false, how = "signal 11 (SIGSEGV)", value = what it sent (nothing)
//   could not fork      ok = false, how = "could not fork: <reason>"
// Requires: no other thread of the caller holds a lock work() needs, and no
// other thread runs OpenMP parallel regions (GNU libgomp's thread pool does
// not survive a fork; the calling thread's pool is released before it, so
// the child can start its own); the child inherits signal handlers, open files and
// the environment. What work() writes to stdout or stderr reaches the
// caller's stdout and stderr (the caller's buffered output is flushed before
// the fork).
#pragma once

#include <functional>
#include <string>

namespace axon::support {

struct ChildResult {
  bool ok = false;
  std::string value;  // what work() returned (or the exception's message)
  std::string how;    // "exit 0", "exit 3", "signal 11 (SIGSEGV)", "could not fork: ..."
};

ChildResult in_child(const std::function<std::string()>& work);

}  // namespace axon::support
