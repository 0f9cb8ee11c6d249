// support::in_child after this thread has run an OpenMP parallel region in a
// loaded kernel (as `axon optimize` does when its float64 reference twin runs
// before the bench forks): the child's own parallel region must start its
// threads and finish, not wait for the parent's pool, which fork does not
// copy. Plus the result's forms: a value, a throw, a signal.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

#include "support/in_child.h"

namespace {

using axon::support::ChildResult;
using axon::support::in_child;

// A shared object whose function counts the threads of a two-thread
// parallel region.
using CountThreads = int (*)();

CountThreads load_openmp_kernel() {
  const std::string stem = ::testing::TempDir() + "/axon-omp-threads-" + std::to_string(::getpid());
  const std::string src = stem + ".cpp", so = stem + ".so";
  {
    std::ofstream f(src);
    f << "#include <omp.h>\n"
         "extern \"C\" int count_threads() {\n"
         "  int n = 0;\n"
         "#pragma omp parallel num_threads(2) reduction(+ : n)\n"
         "  n += 1;\n"
         "  return n;\n"
         "}\n";
  }
  const std::string cmd = "g++ -O1 -fopenmp -fPIC -shared " + src + " -o " + so;
  if (std::system(cmd.c_str()) != 0) return nullptr;
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  return h ? reinterpret_cast<CountThreads>(dlsym(h, "count_threads")) : nullptr;
}

TEST(in_child, RunsOpenMPAfterTheParentDid) {
  CountThreads count = load_openmp_kernel();
  ASSERT_NE(count, nullptr) << dlerror();
  ASSERT_EQ(count(), 2);  // the parent's pool now exists
  ChildResult r = in_child([count] {
    alarm(60);  // a child stuck waiting for the parent's pool dies of SIGALRM instead of hanging the test
    return std::to_string(count());
  });
  EXPECT_TRUE(r.ok) << r.how << " " << r.value;
  EXPECT_EQ(r.value, "2");
  EXPECT_EQ(count(), 2);  // and the parent's next region starts a new pool
}

TEST(in_child, ReportsAValueAThrowAndASignal) {
  ChildResult v = in_child([] { return std::string("hello"); });
  EXPECT_TRUE(v.ok);
  EXPECT_EQ(v.value, "hello");
  EXPECT_EQ(v.how, "exit 0");

  ChildResult t = in_child([]() -> std::string { throw std::runtime_error("no luck"); });
  EXPECT_FALSE(t.ok);
  EXPECT_EQ(t.how, "exit 3");
  EXPECT_EQ(t.value, "no luck");

  ChildResult s = in_child([]() -> std::string {
    std::raise(SIGSEGV);
    return "unreachable";
  });
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.how.rfind("signal 11", 0), 0u) << s.how;
}

}  // namespace
