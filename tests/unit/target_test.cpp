// The hardware description: detection is sane on the machine the tests run
// on (and agrees with the kernel's /proc/cpuinfo), the JSON form round-trips,
// overrides merge field by field, malformed files are refused naming the
// field and the value, the fingerprint ignores measured peaks, and the probe
// returns plausible peaks quickly. The `axon target` command is checked
// through the binary when AXON_BIN is set (ctest sets it).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "support/diagnostic.h"
#include "target/target.h"

namespace axon::target {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The "flags" line of /proc/cpuinfo as a set; empty when unreadable.
std::set<std::string> cpuinfo_flags() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

// The message of the Diagnostic `f` throws, or "" when it throws none.
template <class F>
std::string diagnostic_of(F&& f) {
  try {
    f();
  } catch (const Diagnostic& d) {
    return d.what();
  }
  return "";
}

Target sample() {
  Target t;
  t.name = "Sample CPU 9000";
  t.cores = 8;
  t.threads = 16;
  t.caches = {{1, 48 << 10, 64, 1}, {2, 1 << 20, 64, 1}, {3, 32 << 20, 64, 8}};
  t.isa.avx2 = t.isa.fma = true;
  t.isa.avx512f = t.isa.avx512bw = t.isa.avx512vl = t.isa.avx512dq = true;
  t.isa.avx512vnni = true;
  t.peaks = {100, 700, 20, 60};
  return t;
}

TEST(target, DetectionIsSane) {
  Target t = detect_host(/*probe=*/false);
  EXPECT_FALSE(t.name.empty());
  EXPECT_GE(t.cores, 1);
  EXPECT_GE(t.threads, t.cores);
  ASSERT_NE(t.cache(1), nullptr) << describe(t);
  ASSERT_NE(t.cache(2), nullptr) << describe(t);
  EXPECT_GT(t.cache(1)->bytes, 0);
  EXPECT_LE(t.cache(1)->bytes, t.cache(2)->bytes);
  if (t.cache(3)) {
    EXPECT_LE(t.cache(2)->bytes, t.cache(3)->bytes);
  }
  for (const Cache& c : t.caches) {
    EXPECT_GE(c.shared_by_cores, 1);
    EXPECT_LE(c.shared_by_cores, t.cores);
    EXPECT_GT(c.line_bytes, 0);
  }
  for (size_t i = 1; i < t.caches.size(); ++i) EXPECT_LT(t.caches[i - 1].level, t.caches[i].level);
  EXPECT_EQ(t.peaks.fma_gflops_1t, 0) << "no probe was asked for";
}

TEST(target, IsaAgreesWithProcCpuinfo) {
  std::set<std::string> flags = cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "/proc/cpuinfo has no flags line here";
  Isa isa = detect_host(false).isa;
  // The kernel lists AVX-512 only when it saves the zmm state, the same
  // condition detection checks with xgetbv.
  EXPECT_EQ(isa.avx2, flags.count("avx2") == 1);
  EXPECT_EQ(isa.fma, flags.count("fma") == 1);
  EXPECT_EQ(isa.avx512f, flags.count("avx512f") == 1);
  EXPECT_EQ(isa.avx512bw, flags.count("avx512bw") == 1);
  EXPECT_EQ(isa.avx512vl, flags.count("avx512vl") == 1);
  EXPECT_EQ(isa.avx512dq, flags.count("avx512dq") == 1);
  EXPECT_EQ(isa.avx512vnni, flags.count("avx512_vnni") == 1);
  EXPECT_EQ(isa.avx512bf16, flags.count("avx512_bf16") == 1);
}

TEST(target, VectorBitsFollowTheIsa) {
  Target t = sample();
  EXPECT_EQ(t.isa.vector_bits(), 512);
  EXPECT_EQ(restrict_to_avx2(t).isa.vector_bits(), 256);
  t.isa.avx512dq = false;  // AVX-512 needs all of f, bw, vl, dq
  EXPECT_EQ(t.isa.vector_bits(), 256);
  t.isa.fma = false;
  EXPECT_EQ(t.isa.vector_bits(), 0);
}

TEST(target, RestrictToAvx2ClearsEveryAvx512Flag) {
  Target a = restrict_to_avx2(sample());
  EXPECT_TRUE(a.isa.avx2 && a.isa.fma);
  EXPECT_FALSE(a.isa.avx512f || a.isa.avx512bw || a.isa.avx512vl || a.isa.avx512dq || a.isa.avx512vnni ||
               a.isa.avx512bf16);
  EXPECT_NE(a.fingerprint(), sample().fingerprint());
  EXPECT_EQ(a.cores, sample().cores);
}

TEST(target, FingerprintIgnoresPeaksButNotTheMachine) {
  Target a = sample(), b = sample();
  b.peaks = {1, 2, 3, 4};
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  b = sample();
  b.cores = 4;
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  b = sample();
  b.caches[1].bytes = 2 << 20;
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  b = sample();
  b.name = "Other CPU";
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  b = sample();
  b.isa.avx512bf16 = true;
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  EXPECT_EQ(detect_host(false).fingerprint(), detect_host(false).fingerprint());
}

TEST(target, JsonRoundTrips) {
  Target t = sample();
  json j = to_json(t);
  Target back = from_json(j, Target{});
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.fingerprint(), t.fingerprint());
  // The host's own description (what `axon target --json` prints) too.
  json host = to_json(detect_host(false));
  EXPECT_EQ(to_json(from_json(host, Target{})), host);
}

TEST(target, OverrideReplacesOnlyTheFieldsGiven) {
  json j = json::parse(R"({"cores": 4, "isa": {"avx512f": false},
                           "caches": [{"level": 2, "bytes": 2097152}, {"level": 1}],
                           "peaks": {"stream_gbs_all": 55.5}})");
  Target t = from_json(j, sample());
  EXPECT_EQ(t.cores, 4);
  EXPECT_EQ(t.threads, 16);
  EXPECT_EQ(t.name, "Sample CPU 9000");
  EXPECT_FALSE(t.isa.avx512f);
  EXPECT_TRUE(t.isa.avx512bw);
  EXPECT_EQ(t.isa.vector_bits(), 256);
  // The list of caches is the one given, sorted; missing fields of a level
  // come from the base's cache of that level.
  ASSERT_EQ(t.caches.size(), 2u);
  EXPECT_EQ(t.caches[0].level, 1);
  EXPECT_EQ(t.caches[0].bytes, 48 << 10);
  EXPECT_EQ(t.caches[1].bytes, 2 << 20);
  EXPECT_EQ(t.cache(3), nullptr);
  EXPECT_EQ(t.peaks.stream_gbs_all, 55.5);
  EXPECT_EQ(t.peaks.fma_gflops_1t, 100);
}

TEST(target, MalformedOverridesNameTheFieldAndTheValue) {
  struct Case {
    const char* json;
    std::vector<std::string> expect;
  };
  const Case cases[] = {
      {R"({"corez": 4})", {"corez", "4", "cores"}},
      {R"({"cores": "four"})", {"'cores'", "\"four\"", "integer"}},
      {R"({"cores": 0})", {"'cores'", "got 0"}},
      {R"({"cores": -2})", {"'cores'", "-2"}},
      {R"({"cores": 2.5})", {"'cores'", "2.5"}},
      {R"({"threads": 4})", {"threads", "4", ">= cores"}},
      {R"({"name": ""})", {"'name'", "non-empty"}},
      {R"({"isa": {"avx512f": "yes"}})", {"isa.avx512f", "\"yes\""}},
      {R"({"isa": {"sse9": true}})", {"isa.sse9", "true"}},
      {R"({"isa": [1]})", {"'isa'", "[1]"}},
      {R"({"caches": {"level": 1}})", {"'caches'", "array"}},
      {R"({"caches": [{"level": 1, "bytes": -64}]})", {"caches[0].bytes", "-64"}},
      {R"({"caches": [{"level": 1}, {"level": 1}]})", {"caches[1].level", "at most once"}},
      {R"({"caches": [{"bytes": 64}]})", {"caches[0]", "level"}},
      {R"({"caches": [{"level": 4}]})", {"caches[0]", "bytes", "no L4"}},
      {R"({"caches": [{"level": 1, "line_bytes": 48}]})", {"caches[0].line_bytes", "48", "power of two"}},
      {R"({"caches": [{"level": 1, "size": 48}]})", {"caches[0].size", "48"}},
      {R"({"peaks": {"fma_gflops_1t": -1}})", {"peaks.fma_gflops_1t", "-1"}},
      {R"({"peaks": {"fma_gflops_1t": "fast"}})", {"peaks.fma_gflops_1t", "\"fast\""}},
      {R"({"vector_bits": 256})", {"vector_bits", "256", "512"}},
      {R"([1, 2])", {"top level", "[1,2]"}},
  };
  for (const Case& c : cases) {
    std::string msg = diagnostic_of([&] { from_json(json::parse(c.json), sample()); });
    ASSERT_FALSE(msg.empty()) << c.json << " was accepted";
    for (const std::string& e : c.expect) EXPECT_NE(msg.find(e), std::string::npos) << c.json << " -> " << msg;
  }
}

TEST(target, LoadTargetFileNamesTheFile) {
  fs::path dir = fs::path(testing::TempDir()) / ("axon-target-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto write = [&](const char* name, const char* text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  std::string ok = write("ok.json", R"({"name": "Narrow", "cores": 1, "threads": 1})");
  Target t = load_target_file(ok, sample());
  EXPECT_EQ(t.name, "Narrow");
  EXPECT_EQ(t.cores, 1);

  std::string broken = write("broken.json", R"({"cores": 4,)");
  std::string msg = diagnostic_of([&] { load_target_file(broken, sample()); });
  EXPECT_NE(msg.find(broken), std::string::npos) << msg;
  EXPECT_NE(msg.find("not valid JSON"), std::string::npos) << msg;

  std::string bad = write("bad.json", R"({"cores": -1})");
  msg = diagnostic_of([&] { load_target_file(bad, sample()); });
  EXPECT_NE(msg.find(bad), std::string::npos) << msg;
  EXPECT_NE(msg.find("'cores'"), std::string::npos) << msg;

  msg = diagnostic_of([&] { load_target_file((dir / "missing.json").string(), sample()); });
  EXPECT_NE(msg.find("cannot read"), std::string::npos) << msg;
  fs::remove_all(dir);
}

TEST(target, ResolveAppliesFileThenAvx2) {
  fs::path file = fs::path(testing::TempDir()) / ("axon-target-resolve-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << R"({"name": "From a file", "peaks": {"fma_gflops_1t": 12}})";
  Target t = resolve_target(file.string(), /*avx2_only=*/true, /*probe=*/true);
  fs::remove(file);
  EXPECT_EQ(t.name, "From a file");
  EXPECT_FALSE(t.isa.avx512f);
  // A peak given by the file means nothing is measured.
  EXPECT_EQ(t.peaks.fma_gflops_1t, 12);
  EXPECT_EQ(t.peaks.stream_gbs_1t, 0);
}

TEST(target, ProbeMeasuresPlausiblePeaksQuickly) {
  Target t = detect_host(false);
  auto t0 = std::chrono::steady_clock::now();
  measure_peaks(t);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Its buffers are 2x the last-level cache each: on a VM that reports its
  // socket's 260 MiB L3, 1.5 GiB of fresh huge pages, which the kernel may
  // compact before it maps them (7 s alone, 11.7 s beside another suite).
  EXPECT_LT(secs, 30.0);
  const Peaks& p = t.peaks;
  // Wide bounds: the machine may be shared, but a 1 GFLOP/s vector core or a
  // 1 TB/s single thread means the measurement is broken.
  EXPECT_GT(p.fma_gflops_1t, 1.0);
  EXPECT_LT(p.fma_gflops_1t, 2000.0);
  EXPECT_GT(p.fma_gflops_all, 0.3 * p.fma_gflops_1t);
  EXPECT_LT(p.fma_gflops_all, 2000.0 * t.cores);
  EXPECT_GT(p.stream_gbs_1t, 0.2);
  EXPECT_LT(p.stream_gbs_1t, 1000.0);
  EXPECT_GT(p.stream_gbs_all, 0.2);
  EXPECT_LT(p.stream_gbs_all, 5000.0);
  // An AVX-512 FMA loop does at least 16 lanes x 2 FLOPs per ~cycle at
  // >= 0.5 GHz on any real core; half of that allows for a busy machine.
  if (t.isa.vector_bits() == 512) {
    EXPECT_GT(p.fma_gflops_1t, 8.0);
  }
}

// The command, through the binary.
struct Ran {
  int rc;
  std::string out;
};
Ran run(const std::string& args) {
  const char* bin = std::getenv("AXON_BIN");
  std::string cmd = std::string(bin) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(target, CommandPrintsAndOverrides) {
  if (!std::getenv("AXON_BIN")) GTEST_SKIP() << "AXON_BIN is not set (run through ctest)";
  Ran r = run("target --no-probe --json");
  ASSERT_EQ(r.rc, 0) << r.out;
  json j = json::parse(r.out);
  EXPECT_EQ(j["fingerprint"], detect_host(false).fingerprint());
  EXPECT_EQ(j["peaks"]["fma_gflops_1t"], 0);

  r = run("target --no-probe");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("fingerprint"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not measured"), std::string::npos) << r.out;

  r = run("target --no-probe --json --avx2");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["vector_bits"].get<int>() <= 256, true);

  fs::path file = fs::path(testing::TempDir()) / ("axon-target-cli-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << R"({"cores": 1, "threads": 1, "L9": 1})";
  r = run("target --no-probe --target " + file.string());
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find(file.string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unknown target field 'L9'"), std::string::npos) << r.out;

  std::ofstream(file) << R"({"name": "Overridden", "cores": 1, "threads": 1})";
  r = run("target --no-probe --target " + file.string());
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("Overridden"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 physical"), std::string::npos) << r.out;
  fs::remove(file);
}

TEST(target, ColdRotationIsCappedByMemoryButStaysAboveTwiceTheCache) {
  const double MiB = 1024.0 * 1024.0, memory = physical_memory_bytes();
  ASSERT_GT(memory, 0);
  Target t;
  t.cores = 2;
  // A small L3: three buffers of 64 MiB, unless a sixteenth of memory is less.
  t.caches = {{1, 48 << 10, 64, 1}, {2, 2 << 20, 64, 1}, {3, 32 << 20, 64, 2}};
  EXPECT_DOUBLE_EQ(cold_rotation_bytes(t), std::min(192 * MiB, std::max(64 * MiB, memory / 16)));
  // The 480 MiB L3 of a large socket: 3 x 960 MiB wanted, at most a sixteenth
  // of memory, never below 960 MiB.
  t.caches.back() = {3, int64_t{480} << 20, 64, 2};
  double r = cold_rotation_bytes(t);
  EXPECT_GE(r, 960 * MiB);
  EXPECT_LE(r, 2880 * MiB);
  EXPECT_DOUBLE_EQ(r, std::min(2880 * MiB, std::max(960 * MiB, memory / 16)));
  // A cache larger than a sixteenth of memory still gets twice itself.
  t.caches.back() = {3, static_cast<int64_t>(memory / 8), 64, 2};
  EXPECT_DOUBLE_EQ(cold_rotation_bytes(t), 2 * static_cast<double>(static_cast<int64_t>(memory / 8)));
}

}  // namespace
}  // namespace axon::target
