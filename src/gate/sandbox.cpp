#include "gate/sandbox.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

extern char** environ;

namespace axon::gate {

namespace {

void set_limit(int resource, int64_t soft, int64_t hard) {
  struct rlimit rl;
  rl.rlim_cur = static_cast<rlim_t>(soft);
  rl.rlim_max = static_cast<rlim_t>(hard);
  setrlimit(resource, &rl);
}

int64_t file_size(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

}  // namespace

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGPIPE: return "SIGPIPE";
    default: return "signal " + std::to_string(sig);
  }
}

std::string SandboxResult::describe() const {
  char buf[160];
  if (!started) return "could not start: " + start_error;
  if (killed_idle) std::snprintf(buf, sizeof buf, "killed after %.1f s without progress", wall_s);
  else if (killed_wall) std::snprintf(buf, sizeof buf, "killed after %.1f s in all", wall_s);
  else if (exited) std::snprintf(buf, sizeof buf, "exit %d", exit_code);
  else std::snprintf(buf, sizeof buf, "signal %d (%s)", signal, signal_name(signal).c_str());
  return buf;
}

std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  static const char* kDropped[] = {"LD_PRELOAD=", "LD_AUDIT=", "OMP_WAIT_POLICY=", "GOMP_SPINCOUNT=",
                                   "ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS=", "TSAN_OPTIONS=", "MALLOC_"};
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    bool drop = false;
    for (const char* d : kDropped) drop = drop || std::strncmp(*e, d, std::strlen(d)) == 0;
    for (const std::string& x : extra) {  // a variable `extra` sets is set once, to its value
      const size_t eq = x.find('=');
      drop = drop || (eq != std::string::npos && std::strncmp(*e, x.c_str(), eq + 1) == 0);
    }
    if (!drop) env.push_back(*e);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

SandboxResult run_sandboxed(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                            const std::string& cwd, const std::string& log_path, const SandboxLimits& limits) {
  using Clock = std::chrono::steady_clock;
  SandboxResult res;
  // Everything the child needs is prepared before fork.
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const char* log = log_path.c_str();
  const char* dir = cwd.c_str();

  Clock::time_point t0 = Clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    res.start_error = std::string("fork: ") + std::strerror(errno);
    return res;
  }
  if (pid == 0) {
    setpgid(0, 0);
    int in = open("/dev/null", O_RDONLY);
    int out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) _exit(126);
    if (chdir(dir) != 0) _exit(126);
    set_limit(RLIMIT_CORE, 0, 0);
    if (limits.address_space_bytes > 0) set_limit(RLIMIT_AS, limits.address_space_bytes, limits.address_space_bytes);
    if (limits.cpu_seconds > 0) set_limit(RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 5);
    if (limits.file_size_bytes > 0) set_limit(RLIMIT_FSIZE, limits.file_size_bytes, limits.file_size_bytes);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  setpgid(pid, pid);  // also from here, so the group exists before any kill
  res.started = true;

  int64_t last_size = -1;
  Clock::time_point last_progress = t0;
  bool killed = false;
  const std::string wall_file =
      limits.wall_clock_file.empty() || limits.wall_clock_file[0] == '/' ? limits.wall_clock_file
                                                                         : cwd + "/" + limits.wall_clock_file;
  bool wall_running = wall_file.empty();
  Clock::time_point wall_start = t0;
  for (;;) {
    // Look without reaping, so the group can still be killed by its id.
    siginfo_t info;
    std::memset(&info, 0, sizeof info);
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) break;
    Clock::time_point now = Clock::now();
    if (!limits.progress_file.empty()) {
      int64_t size = file_size(limits.progress_file);
      if (size != last_size) {
        last_size = size;
        last_progress = now;
      }
    }
    if (!wall_running && access(wall_file.c_str(), F_OK) == 0) {
      wall_running = true;
      wall_start = now;
    }
    double idle = std::chrono::duration<double>(now - last_progress).count();
    double total = wall_running ? std::chrono::duration<double>(now - wall_start).count() : 0;
    if (!killed && limits.idle_timeout_s > 0 && idle > limits.idle_timeout_s) {
      res.killed_idle = killed = true;
      kill(-pid, SIGKILL);
    } else if (!killed && limits.wall_timeout_s > 0 && total > limits.wall_timeout_s) {
      res.killed_wall = killed = true;
      kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  kill(-pid, SIGKILL);  // leftovers of the group, if any
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  res.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (WIFEXITED(status)) {
    res.exited = true;
    res.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    res.signal = WTERMSIG(status);
  }
  return res;
}

}  // namespace axon::gate
