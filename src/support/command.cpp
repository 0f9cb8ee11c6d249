#include "support/command.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "support/affinity.h"

extern char** environ;

namespace axon::support {

CommandResult run_command(const std::vector<std::string>& argv, const std::string& cwd) {
  CommandResult res;
  int fds[2];
  if (pipe(fds) != 0) {
    res.how = std::string("could not start: pipe: ") + std::strerror(errno);
    return res;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int err;
  {
    support::ScopedStartMask all_cpus;  // not the core an OpenMP region pinned this thread to
    err = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  }
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    res.how = std::string("could not start: ") + std::strerror(err);
    return res;
  }
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) res.output.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  close(fds[0]);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(wstatus)) {
    res.status = WEXITSTATUS(wstatus);
    res.how = "exit " + std::to_string(res.status);
  } else if (WIFSIGNALED(wstatus)) {
    res.how = "signal " + std::to_string(WTERMSIG(wstatus));
  }
  return res;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

std::string first_lines(const std::string& text, int n) {
  std::istringstream in(text);
  std::string line, out;
  int count = 0;
  while (std::getline(in, line)) {
    if (count++ == n) {
      out += "[... log truncated after " + std::to_string(n) + " lines]\n";
      break;
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace axon::support
