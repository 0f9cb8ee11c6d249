// The kernel runtime: the compile cache, loading, calling and timing.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "runtime/compile_shared.h"
#include "runtime/loaded_kernel.h"
#include "runtime/time_calls.h"
#include "support/affinity.h"
#include "support/command.h"
#include "support/diagnostic.h"

namespace axon {
namespace {

namespace fs = std::filesystem;
using codegen::KernelSource;

// Cache folders no earlier run has filled, removed when the tests exit.
class ScratchCaches {
 public:
  std::string make(const std::string& name) {
    static std::random_device rd;
    fs::path p = fs::path(testing::TempDir()) / ("axon-runtime-" + name + "-" + std::to_string(rd()));
    fs::remove_all(p);
    made_.push_back(p);
    return p.string();
  }
  ~ScratchCaches() {
    std::error_code ec;
    for (const fs::path& p : made_) fs::remove_all(p, ec);
  }

 private:
  std::vector<fs::path> made_;
};

std::string fresh_cache_dir(const std::string& name) {
  static ScratchCaches caches;  // cleaned up at exit
  return caches.make(name);
}

KernelSource add_one_kernel(const std::string& tag = "") {
  KernelSource k;
  k.entry = "add_one";
  k.header = "#include <stdint.h>\n#ifdef __cplusplus\nextern \"C\"\n#endif\nvoid add_one(const float* x, float* y);\n";
  k.source = "#include \"kernel.h\"\n// " + tag +
             "\nextern \"C\" void add_one(const float* x, float* y) { for (int i = 0; i < 4; ++i) y[i] = x[i] + 1; }\n";
  return k;
}

double seconds_of(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(runtime, CompileCacheHitsOnTheSecondCall) {
  runtime::CompileOptions opts;
  opts.cache_dir = fresh_cache_dir("hit");
  std::string first, second;
  double cold = seconds_of([&] { first = runtime::compile_shared(add_one_kernel(), opts); });
  auto stamp = fs::last_write_time(first);
  double warm = seconds_of([&] { second = runtime::compile_shared(add_one_kernel(), opts); });
  EXPECT_EQ(first, second);
  EXPECT_EQ(fs::last_write_time(second), stamp) << "the library was not rebuilt";
  EXPECT_LT(warm, cold / 10) << "cold " << cold << " s, warm " << warm << " s";
  EXPECT_TRUE(fs::exists(fs::path(first).parent_path() / "kernel.cpp"));
  EXPECT_TRUE(fs::exists(fs::path(first).parent_path() / "kernel.h"));

  runtime::LoadedKernel k(first, "add_one");
  float x[4] = {1, 2, 3, 4}, y[4] = {};
  k.call({x, y});
  EXPECT_EQ(y[0], 2);
  EXPECT_EQ(y[3], 5);
}

TEST(runtime, CacheKeyCoversSourceHeaderAndFlags) {
  runtime::CompileOptions opts;
  opts.cache_dir = fresh_cache_dir("key");
  std::string base = runtime::compile_shared(add_one_kernel(), opts);
  KernelSource other_header = add_one_kernel();
  other_header.header += "// another header\n";
  EXPECT_NE(runtime::compile_shared(other_header, opts), base);
  EXPECT_NE(runtime::compile_shared(add_one_kernel("changed"), opts), base);
  runtime::CompileOptions o1 = opts;
  o1.flags = {"-O1", "-fPIC", "-shared"};
  EXPECT_NE(runtime::compile_shared(add_one_kernel(), o1), base);
}

TEST(runtime, CompileErrorReportsTheCompilerLog) {
  runtime::CompileOptions opts;
  opts.cache_dir = fresh_cache_dir("error");
  KernelSource k = add_one_kernel();
  k.source += "int broken = ;\n";
  try {
    runtime::compile_shared(k, opts);
    FAIL() << "a broken kernel compiled";
  } catch (const InternalError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("compiling kernel 'add_one' failed"), std::string::npos) << msg;
    EXPECT_NE(msg.find("error"), std::string::npos) << msg;
    EXPECT_NE(msg.find("int broken = ;"), std::string::npos) << "the compiler's own log is quoted: " << msg;
    size_t at = msg.find("source kept at ");
    ASSERT_NE(at, std::string::npos) << msg;
    std::string kept = msg.substr(at + 15);
    kept = kept.substr(0, kept.find('\n'));
    std::ifstream in(kept);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), k.source) << kept;
  }
  // Nothing half-built is left in the cache's place for that key.
  for (const auto& entry : fs::directory_iterator(opts.cache_dir))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}

TEST(runtime, CompileErrorLogIsCutAfterSixtyLines) {
  runtime::CompileOptions opts;
  opts.cache_dir = fresh_cache_dir("long-error");
  KernelSource k = add_one_kernel();
  for (int i = 0; i < 100; ++i) k.source += "int broken" + std::to_string(i) + " = ;\n";
  try {
    runtime::compile_shared(k, opts);
    FAIL() << "a broken kernel compiled";
  } catch (const InternalError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("log truncated after 60 lines"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("broken99"), std::string::npos) << "late errors are cut";
  }
}

TEST(runtime, ParallelCompilesOfOneKernelAgree) {
  runtime::CompileOptions opts;
  opts.cache_dir = fresh_cache_dir("parallel");
  std::vector<std::string> paths(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] { paths[i] = runtime::compile_shared(add_one_kernel("parallel"), opts); });
  for (std::thread& t : threads) t.join();
  for (int i = 1; i < 4; ++i) EXPECT_EQ(paths[i], paths[0]);
  runtime::LoadedKernel k(paths[0], "add_one");
  for (const auto& entry : fs::directory_iterator(opts.cache_dir))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << "left behind: " << entry.path();
}

TEST(runtime, LoadedKernelPassesUpToThirtyTwoBuffers) {
  runtime::CompileOptions opts;
  opts.cache_dir = fresh_cache_dir("many");
  KernelSource k;
  k.entry = "many";
  std::string params, sum;
  for (int i = 0; i < 32; ++i) {
    params += (i ? ", " : "") + std::string("float* a") + std::to_string(i);
    if (i < 31) sum += (i ? " + " : "") + std::string("a") + std::to_string(i) + "[0] * " + std::to_string(i + 1);
  }
  k.header = "void many(" + params + ");\n";
  k.source = "extern \"C\" void many(" + params + ") { a31[0] = " + sum + "; }\n";
  runtime::LoadedKernel kernel(runtime::compile_shared(k, opts), "many");
  std::vector<float> v(32, 1.0f);
  std::vector<void*> ptrs;
  for (float& f : v) ptrs.push_back(&f);
  kernel.call(ptrs);
  EXPECT_EQ(v[31], 31 * 32 / 2);
  ptrs.push_back(&v[0]);
  EXPECT_THROW(kernel.call(ptrs), InternalError);
}

TEST(runtime, LoadedKernelReportsLoadErrors) {
  try {
    runtime::LoadedKernel k("/nonexistent/kernel.so", "f");
    FAIL();
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/kernel.so"), std::string::npos) << e.what();
  }
  runtime::CompileOptions opts;
  opts.cache_dir = fresh_cache_dir("symbol");
  std::string so = runtime::compile_shared(add_one_kernel(), opts);
  try {
    runtime::LoadedKernel k(so, "no_such_entry");
    FAIL();
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_entry"), std::string::npos) << e.what();
  }
}

TEST(runtime, LoadedKernelMoves) {
  runtime::CompileOptions opts;
  opts.cache_dir = fresh_cache_dir("move");
  runtime::LoadedKernel a(runtime::compile_shared(add_one_kernel(), opts), "add_one");
  runtime::LoadedKernel b(std::move(a));
  float x[4] = {0, 0, 0, 0}, y[4];
  b.call({x, y});
  EXPECT_EQ(y[2], 1);
  EXPECT_THROW(a.call({x, y}), InternalError);  // NOLINT(bugprone-use-after-move): checked on purpose
  runtime::LoadedKernel c = std::move(b);
  c.call({y, x});
  EXPECT_EQ(x[1], 2);
  EXPECT_FALSE(std::is_copy_constructible_v<runtime::LoadedKernel>);
}

TEST(runtime, TimeCallsRunsWarmupThenEnoughRepetitions) {
  int calls = 0;
  runtime::Timing t = runtime::time_calls([&] { ++calls; }, 3, 7, 0.0);
  EXPECT_EQ(t.reps, 7);
  EXPECT_EQ(calls, 10);
  EXPECT_LE(t.min_ms, t.median_ms);
  EXPECT_LE(t.median_ms, t.max_ms);

  // A minimum time keeps it going past min_reps.
  runtime::Timing s = runtime::time_calls([] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }, 0, 2, 0.03);
  EXPECT_GE(s.reps, 10);
  EXPECT_GE(s.min_ms, 2.0);
}

TEST(runtime, CompilerVersionAndCacheFolder) {
  runtime::CompileOptions opts;
  std::string v = runtime::compiler_version(opts.cxx);
  EXPECT_FALSE(v.empty());
  EXPECT_EQ(v.find('\n'), std::string::npos);
  EXPECT_EQ(runtime::compiler_version(opts.cxx), v);
  EXPECT_THROW(runtime::compiler_version("/nonexistent/c++"), InternalError);

  opts.cache_dir = "/somewhere";
  EXPECT_EQ(runtime::resolve_cache_dir(opts), "/somewhere");
  opts.cache_dir.clear();
  const char* saved = std::getenv("AXON_CACHE_DIR");
  std::string saved_value = saved ? saved : "";
  setenv("AXON_CACHE_DIR", "/from/env", 1);
  EXPECT_EQ(runtime::resolve_cache_dir(opts), "/from/env");
  unsetenv("AXON_CACHE_DIR");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) {
    EXPECT_EQ(runtime::resolve_cache_dir(opts), std::string(xdg) + "/axon");
  }
  if (saved) setenv("AXON_CACHE_DIR", saved_value.c_str(), 1);
}

}  // namespace
}  // namespace axon

// A thread pinned to one core (as OpenMP pins the thread that times a kernel)
// spawns its children on every core the process started with, and keeps its
// own pin. Without this, `axon bench` ran the peers on one core.
TEST(runtime, ChildrenOfAPinnedThreadGetTheStartMask) {
  const cpu_set_t& start = axon::support::start_mask();
  if (CPU_COUNT(&start) < 2) GTEST_SKIP() << "one CPU: nothing to unpin";
  int first = 0;
  while (!CPU_ISSET(first, &start)) ++first;
  std::thread t([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    auto r = axon::support::run_command({"grep", "Cpus_allowed_list", "/proc/self/status"});
    std::istringstream is(r.output);
    std::string key, list;
    is >> key >> list;
    // Count the CPUs of a list like "0-1" or "0,2-3".
    int n = 0;
    std::stringstream parts(list);
    for (std::string part; std::getline(parts, part, ',');) {
      auto dash = part.find('-');
      n += dash == std::string::npos ? 1 : std::stoi(part.substr(dash + 1)) - std::stoi(part.substr(0, dash)) + 1;
    }
    EXPECT_EQ(n, CPU_COUNT(&start)) << r.output;
    cpu_set_t now;
    ASSERT_EQ(sched_getaffinity(0, sizeof now, &now), 0);
    EXPECT_TRUE(CPU_EQUAL(&now, &one));  // the thread's own pin is back
  });
  t.join();
}
