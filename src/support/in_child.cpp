// in_child: fork, run, send the result through a pipe; contract in in_child.h.
#include "support/in_child.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>

namespace axon::support {

namespace {

void write_all(int fd, const std::string& s) {
  size_t at = 0;
  while (at < s.size()) {
    ssize_t n = write(fd, s.data() + at, s.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    at += static_cast<size_t>(n);
  }
}

std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  return "signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : std::string());
}

// A kernel that axon loaded into this process may have run an OpenMP
// parallel region from this thread: libgomp then keeps a pool of worker
// threads that fork does not copy, and the child's next parallel region
// waits for them forever. Releasing the pool first (OpenMP 5's
// omp_pause_resource_all) lets the child start its own. libgomp is looked
// up only if a kernel already loaded it; axon itself does not link it.
void release_openmp_threads() {
  void* gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!gomp) return;
  using Pause = int (*)(int);
  if (auto pause = reinterpret_cast<Pause>(dlsym(gomp, "omp_pause_resource_all"))) pause(2 /* omp_pause_hard */);
  dlclose(gomp);  // drops only the reference RTLD_NOLOAD took
}

}  // namespace

ChildResult in_child(const std::function<std::string()>& work) {
  ChildResult r;
  int fds[2];
  if (pipe(fds) != 0) {
    r.how = std::string("could not fork: pipe: ") + std::strerror(errno);
    return r;
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  release_openmp_threads();
  pid_t pid = fork();
  if (pid < 0) {
    r.how = std::string("could not fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return r;
  }
  if (pid == 0) {
    close(fds[0]);
    int code = 0;
    std::string out;
    try {
      out = work();
    } catch (const std::exception& e) {
      out = e.what(), code = 3;
    } catch (...) {
      out = "an exception that is not a std::exception", code = 3;
    }
    write_all(fds[1], out);
    close(fds[1]);
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    _exit(code);
  }
  close(fds[1]);
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    r.value.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      r.how = std::string("could not wait for the child: ") + std::strerror(errno);
      return r;
    }
  }
  if (WIFEXITED(status)) {
    r.how = "exit " + std::to_string(WEXITSTATUS(status));
    r.ok = WEXITSTATUS(status) == 0;
  } else if (WIFSIGNALED(status)) {
    r.how = signal_text(WTERMSIG(status));
  } else {
    r.how = "ended with status " + std::to_string(status);
  }
  return r;
}

}  // namespace axon::support
