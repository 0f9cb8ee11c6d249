#include "propose/child_process.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "gate/sandbox.h"

namespace axon::propose {

namespace {

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::microseconds(static_cast<long long>(std::max(0.0, seconds) * 1e6));
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "signal " + std::to_string(WTERMSIG(status)) + " (" + gate::signal_name(WTERMSIG(status)) + ")";
  return "status " + std::to_string(status);
}

}  // namespace

ChildProcess::ChildProcess(const std::string& command) {
  // stdin is a socket so that writing to a proposer that has gone returns
  // EPIPE (MSG_NOSIGNAL) instead of raising SIGPIPE in axon; stdout a pipe.
  int in[2], out[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0) {
    start_error_ = std::string("socketpair: ") + std::strerror(errno);
    return;
  }
  if (pipe2(out, O_CLOEXEC) != 0) {
    start_error_ = std::string("pipe: ") + std::strerror(errno);
    close(in[0]);
    close(in[1]);
    return;
  }
  // Everything the child needs is computed before fork: between fork and
  // exec only async-signal-safe calls (axon may be running threads).
  long max_fd = std::min(sysconf(_SC_OPEN_MAX), 65536L);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = fork();
  if (pid < 0) {
    start_error_ = std::string("fork: ") + std::strerror(errno);
    for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
    return;
  }
  if (pid == 0) {
    setpgid(0, 0);
    dup2(in[1], 0);
    dup2(out[1], 1);
    for (long fd = 3; fd < max_fd; ++fd) close(static_cast<int>(fd));
    signal(SIGPIPE, SIG_DFL);
    execv("/bin/sh", const_cast<char* const*>(argv));
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent: no race with an early kill
  close(in[1]);
  close(out[1]);
  to_child_ = in[0];
  from_child_ = out[0];
  fcntl(to_child_, F_SETFL, fcntl(to_child_, F_GETFL) | O_NONBLOCK);
  fcntl(from_child_, F_SETFL, fcntl(from_child_, F_GETFL) | O_NONBLOCK);
  pid_ = pid;
}

ChildProcess::~ChildProcess() { finish(0); }

bool ChildProcess::send_line(const std::string& line, double timeout_s, std::string* error) {
  if (to_child_ < 0) {
    *error = "its input is closed";
    return false;
  }
  std::string data = line + "\n";
  size_t done = 0;
  auto deadline = after(timeout_s);
  while (done < data.size()) {
    ssize_t n = send(to_child_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{to_child_, POLLOUT, 0};
      int left = ms_left(deadline);
      if (left == 0 || poll(&p, 1, left) == 0) {
        *error = "it stopped reading its input (" + std::to_string(done) + " of " + std::to_string(data.size()) +
                 " bytes of the request taken)";
        return false;
      }
      continue;
    }
    *error = errno == EPIPE || errno == ECONNRESET ? "it closed its input or exited"
                                                   : std::string("write: ") + std::strerror(errno);
    return false;
  }
  return true;
}

ChildProcess::ReadStatus ChildProcess::read_line(std::string* line, double timeout_s, size_t max_bytes) {
  auto deadline = after(timeout_s);
  for (;;) {
    size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      *line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return ReadStatus::Line;
    }
    if (buffer_.size() > max_bytes) return ReadStatus::TooLong;
    if (from_child_ < 0) return ReadStatus::Eof;
    char chunk[65536];
    ssize_t n = read(from_child_, chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) {
      close(from_child_);
      from_child_ = -1;
      // A last line without its newline still counts as a line.
      if (!buffer_.empty()) {
        *line = buffer_;
        buffer_.clear();
        return ReadStatus::Line;
      }
      return ReadStatus::Eof;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return ReadStatus::Eof;
    pollfd p{from_child_, POLLIN, 0};
    int left = ms_left(deadline);
    if (left == 0) return ReadStatus::Timeout;
    if (poll(&p, 1, left) == 0) return ReadStatus::Timeout;
  }
}

std::string ChildProcess::exit_status(double wait_s) {
  if (pid_ <= 0) return "not started";
  auto deadline = after(wait_s);
  while (!reaped_) {
    pid_t r = waitpid(pid_, &wait_status_, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) {
      reaped_ = true;
      break;
    }
    if (Clock::now() >= deadline) return "still running";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return describe_status(wait_status_);
}

void ChildProcess::finish(double grace_s) {
  if (to_child_ >= 0) {
    close(to_child_);
    to_child_ = -1;
  }
  if (pid_ <= 0 || finished_) return;
  finished_ = true;
  exit_status(grace_s);
  // Whatever the shell started is in the group, even when the shell itself
  // has exited.
  kill(-pid_, SIGKILL);
  if (!reaped_) {
    while (waitpid(pid_, &wait_status_, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  if (from_child_ >= 0) {
    close(from_child_);
    from_child_ = -1;
  }
}

}  // namespace axon::propose
