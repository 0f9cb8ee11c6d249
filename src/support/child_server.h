// ChildServer: a helper process, forked from this one, that answers
// requests one at a time, each within a deadline the caller sets, whatever
// the work does.
//
// The helper is forked at the first ask() with a function serve(request)
// -> reply, and then serves requests over a socket pair until this object
// goes. ask(request, limit) sends one request and waits for its reply on
// the wall clock; a helper that has not replied when `limit` has passed is
// killed (SIGKILL) and reaped, and the next ask() forks a fresh one. So a
// request costs a round trip over the socket, not a fork, while no request
// can hold the caller past its limit (plus the time to reap the helper).
// The reply:
//   replied             ok = true,  value = serve()'s reply, how = "replied"
//   serve() threw       ok = false, value = the exception's what(), how = "threw"
//   ran past the limit  ok = false, timed_out = true, how = "killed after N ms"
//   the helper died     ok = false, how = "signal 11 (SIGSEGV)", "exit 1", ...
//   could not fork      ok = false, how = "could not fork: <reason>"
//
// The helper keeps only its socket and stdin, stdout and stderr open (it
// holds no pipe of the caller's other children), ignores SIGINT (the
// caller decides what Ctrl-C stops), dies with the thread that forked it
// (PR_SET_PDEATHSIG; the next ask() forks a fresh one) and ends with _exit.
// serve() runs in the helper, on a copy of this process as it was at the
// fork: it must not rely on other threads (only the forking one exists
// there) nor on state that changed here since. A process forked from the
// caller (support/in_child.h, say) that asks gets a helper of its own. ask() is
// not thread-safe: callers serialise it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>

namespace axon::support {

struct HelperReply {
  bool ok = false;
  std::string value;  // serve()'s reply, or the exception's message
  std::string how;    // "replied", "threw", "killed after N ms", "signal 11 (SIGSEGV)", "could not fork: ..."
  bool timed_out = false;
};

class ChildServer {
 public:
  using Serve = std::function<std::string(const std::string&)>;
  explicit ChildServer(Serve serve);
  ~ChildServer();
  ChildServer(const ChildServer&) = delete;
  ChildServer& operator=(const ChildServer&) = delete;

  HelperReply ask(const std::string& request, std::chrono::milliseconds limit);
  /// The helper's process id, or -1 when none is running.
  pid_t helper() const { return pid_; }

 private:
  bool start(std::string* why);
  std::string stop(bool kill_it);  // how the helper ended

  Serve serve_;
  pid_t owner_ = -1;  // the process that forked the helper
  pid_t pid_ = -1;
  int fd_ = -1;
};

}  // namespace axon::support
