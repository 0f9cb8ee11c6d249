// ChildServer: a forked helper answering requests within deadlines;
// contract in child_server.h.
#include "support/child_server.h"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>

namespace axon::support {

namespace {

using Clock = std::chrono::steady_clock;

// A frame: 8 bytes of length (host order: both ends are this program), then
// the bytes. A reply's first byte says whether serve() returned ('r') or
// threw ('t').
bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool write_frame(int fd, const std::string& s) {
  uint64_t n = s.size();
  return write_all(fd, reinterpret_cast<const char*>(&n), sizeof n) && write_all(fd, s.data(), s.size());
}

// Reads n bytes into p; waits until `deadline` when one is given. Returns 1
// when read, 0 at end of file or on an error, -1 when the deadline passed.
int read_all(int fd, char* p, size_t n, const Clock::time_point* deadline) {
  while (n > 0) {
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return -1;
      pollfd pf{fd, POLLIN, 0};
      int ready = poll(&pf, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) return -1;
      if (ready < 0) return 0;
    }
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return 1;
}

int read_frame(int fd, std::string* s, const Clock::time_point* deadline) {
  uint64_t n = 0;
  int r = read_all(fd, reinterpret_cast<char*>(&n), sizeof n, deadline);
  if (r != 1) return r;
  s->assign(n, '\0');
  return n == 0 ? 1 : read_all(fd, s->data(), n, deadline);
}

std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  return "signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : std::string());
}

[[noreturn]] void serve_forever(int fd, pid_t parent, const ChildServer::Serve& serve) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(0);  // the parent went before the line above took hold
  std::signal(SIGINT, SIG_IGN);
  if (fd > 3) close_range(3, static_cast<unsigned>(fd) - 1, 0);
  close_range(static_cast<unsigned>(fd) + 1, ~0u, 0);
  std::string request;
  while (read_frame(fd, &request, nullptr) == 1) {
    std::string reply;
    try {
      reply = "r" + serve(request);
    } catch (const std::exception& e) {
      reply = std::string("t") + e.what();
    } catch (...) {
      reply = "tan exception that is not a std::exception";
    }
    if (!write_frame(fd, reply)) break;
  }
  _exit(0);
}

}  // namespace

ChildServer::ChildServer(Serve serve) : serve_(std::move(serve)) {}

ChildServer::~ChildServer() {
  if (pid_ > 0 && owner_ == getpid()) stop(true);
}

bool ChildServer::start(std::string* why) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    *why = std::string("could not fork: socketpair: ") + std::strerror(errno);
    return false;
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    *why = std::string("could not fork: ") + std::strerror(errno);
    close(sv[0]);
    close(sv[1]);
    return false;
  }
  if (pid == 0) {
    close(sv[0]);
    serve_forever(sv[1], parent, serve_);
  }
  close(sv[1]);
  owner_ = parent;
  pid_ = pid;
  fd_ = sv[0];
  return true;
}

std::string ChildServer::stop(bool kill_it) {
  close(fd_);
  fd_ = -1;
  if (kill_it) kill(pid_, SIGKILL);
  int status = 0;
  pid_t r;
  while ((r = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (r < 0) return std::string("could not wait for the helper: ") + std::strerror(errno);
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return signal_text(WTERMSIG(status));
  return "ended with status " + std::to_string(status);
}

HelperReply ChildServer::ask(const std::string& request, std::chrono::milliseconds limit) {
  const Clock::time_point deadline = Clock::now() + limit;
  HelperReply res;
  if (pid_ > 0 && owner_ != getpid()) {  // inherited through a fork: the helper is the parent's
    close(fd_);
    fd_ = -1;
    pid_ = -1;
  }
  // A helper that died since the last request (its forking thread ended, a
  // signal) is replaced once; a fresh helper that cannot take the request is
  // not.
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool fresh = pid_ < 0;
    if (fresh && !start(&res.how)) return res;
    if (write_frame(fd_, request)) break;
    res.how = stop(true);
    if (fresh) return res;
  }
  std::string reply;
  int r = read_frame(fd_, &reply, &deadline);
  if (r == -1) {
    stop(true);
    res.timed_out = true;
    res.how = "killed after " + std::to_string(limit.count()) + " ms";
    return res;
  }
  if (r == 0 || reply.empty()) {
    res.how = stop(false);
    return res;
  }
  res.ok = reply[0] == 'r';
  res.how = res.ok ? "replied" : "threw";
  res.value = reply.substr(1);
  return res;
}

}  // namespace axon::support
