// The gate on tiny specs: it accepts axon's own naive kernel and rejects a
// kernel that writes out of bounds, one that returns a constant and one that
// calls a forbidden function, each for the stated reason. Plus the pieces
// that need no compiler: the symbol allowlist, the source scan, the roofline
// count. tests/gate/ holds the large corpus.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "codegen/c_like/naive_cpp.h"
#include "frontend/spec.h"
#include "gate/battery.h"
#include "gate/gate.h"
#include "gate/hashing.h"
#include "gate/judge.h"
#include "gate/report.h"
#include "gate/roofline.h"
#include "gate/sandbox.h"
#include "gate/symbols.h"
#include "transforms/pipeline.h"
#include "verify/inputs.h"
#include "verify/kernel_io.h"

namespace axon {
namespace {

// Row-scaled exponent: 6 x 10 (not a multiple of any vector width).
constexpr const char* kSpec = R"(import numpy as np

def scaled_exp(x: "f32[6, 10]", s: "f32[10]"):
    return np.exp(x * 0.5) * s
)";

ir::Graph spec_graph(const char* source = kSpec) {
  frontend::Spec s = frontend::parse_spec("gate_test.py", source, {});
  return transforms::run_pipeline(std::move(s.graph));
}

gate::GateOptions quick(uint64_t seed = 7) {
  gate::GateOptions o;
  o.seed = seed;
  o.run_sanitizer = false;
  o.time_kernel = false;
  o.call_timeout_s = 20;
  return o;
}

std::string codes(const gate::GateReport& r) {
  std::string s;
  for (const gate::Reason& x : r.reasons) s += x.code + ": " + x.message + "\n";
  return s;
}

// A hand-written kernel for kSpec with `body` inside the row loop (i) and
// column loop (j).
std::string kernel(const std::string& body, const std::string& prelude = "") {
  return "#include <cmath>\n" + prelude +
         "extern \"C\" void scaled_exp(const float* x, const float* s, float* out0) {\n"
         "  for (int i = 0; i < 6; ++i)\n"
         "    for (int j = 0; j < 10; ++j) {\n" +
         body + "\n    }\n}\n";
}

TEST(gate, AcceptsTheNaiveKernelWithEveryCheck) {
  ir::Graph g = spec_graph();
  gate::GateOptions o;
  // Not every seed: where `large` inputs (100 x normal) put exp(x / 2) just
  // below the f32 limit and s past 1, the product exceeds it, the kernel
  // returns inf and the float64 reference a finite value whose budget is
  // finite (docs/error_budget.md makes only transcendental results
  // unbounded past the limit), so the naive kernel is rejected for many
  // seeds (`axon verify` of this spec, seeds 1-40: 6 with the earlier
  // generator, 12 with this one). Seed 4 draws no such element.
  o.seed = 4;
  o.replay_command = "axon verify gate_test.py kernel.cpp";
  gate::GateReport r = gate::verify_kernel(g, codegen::emit_naive_cpp(g).source, o);
  EXPECT_TRUE(r.accepted) << codes(r);
  EXPECT_EQ(r.seed, 4u);
  EXPECT_EQ(r.replay, "axon verify gate_test.py kernel.cpp --seed 4");
  EXPECT_GE(r.calls, 10);
  EXPECT_TRUE(r.time_ms.has_value());
  // The time is the soak's: its filled calls, about a quarter of its 1050 to
  // 1299 (all made by a kernel this small), are timed; its kept ones are not.
  EXPECT_GE(r.time_reps, 200);
  EXPECT_LE(r.time_reps, 450);
  EXPECT_EQ(r.kernel_sha.size(), 64u);
  EXPECT_TRUE(r.max_error_over_budget.count("large_mean"));
  EXPECT_TRUE(r.notes.empty()) << r.notes.front();
  nlohmann::json j = gate::report_json(r);
  EXPECT_EQ(j["verdict"], "accept");
  EXPECT_EQ(j["reasons"].size(), 0u);
  EXPECT_GT(j["roofline"]["flops"].get<double>(), 0);
}

TEST(gate, AcceptsAHandWrittenKernel) {
  ir::Graph g = spec_graph();
  gate::GateReport r = gate::verify_kernel(g, kernel("out0[i * 10 + j] = std::exp(x[i * 10 + j] * 0.5f) * s[j];"), quick());
  EXPECT_TRUE(r.accepted) << codes(r);
}

TEST(gate, RejectsAWritePastTheEndOfTheOutput) {
  ir::Graph g = spec_graph();
  // Writes one element past the end on the last row.
  std::string k = kernel("out0[i * 10 + j + (i == 5 && j == 9)] = std::exp(x[i * 10 + j] * 0.5f) * s[j];");
  gate::GateReport r = gate::verify_kernel(g, k, quick());
  EXPECT_FALSE(r.accepted);
  ASSERT_TRUE(r.has_reason(gate::reason::kOutOfBounds)) << codes(r);
  for (const gate::Reason& x : r.reasons) {
    if (x.code != gate::reason::kOutOfBounds) continue;
    EXPECT_EQ(x.evidence["buffer"], "out0");
    EXPECT_EQ(x.evidence["side"], "after");
    EXPECT_EQ(x.evidence["offset"], 6 * 10 * 4);
  }
}

TEST(gate, RejectsAConstantOutputAsIgnoringItsInputs) {
  ir::Graph g = spec_graph();
  gate::GateReport r = gate::verify_kernel(g, kernel("out0[i * 10 + j] = 1.0f;"), quick());
  EXPECT_FALSE(r.accepted);
  EXPECT_TRUE(r.has_reason(gate::reason::kIgnoresInput)) << codes(r);
  EXPECT_TRUE(r.has_reason(gate::reason::kWrongResult)) << codes(r);
  EXPECT_FALSE(r.has_reason(gate::reason::kStaleState)) << codes(r);
}

TEST(gate, RejectsAKernelThatIgnoresOneInput) {
  ir::Graph g = spec_graph();
  gate::GateReport r = gate::verify_kernel(g, kernel("out0[i * 10 + j] = std::exp(x[i * 10 + j] * 0.5f);"), quick());
  ASSERT_TRUE(r.has_reason(gate::reason::kIgnoresInput)) << codes(r);
  for (const gate::Reason& x : r.reasons) {
    if (x.code != gate::reason::kIgnoresInput) continue;
    EXPECT_EQ(x.evidence["differing_inputs"], nlohmann::json({"s"}));
  }
}

TEST(gate, RejectsAForbiddenCallWithoutRunningIt) {
  ir::Graph g = spec_graph();
  std::string k = kernel("out0[i * 10 + j] = std::getenv(\"HOME\") ? std::exp(x[i * 10 + j] * 0.5f) * s[j] : 0.0f;",
                         "#include <cstdlib>\n");
  gate::GateReport r = gate::verify_kernel(g, k, quick());
  ASSERT_TRUE(r.has_reason(gate::reason::kForbiddenSymbol)) << codes(r);
  EXPECT_EQ(r.reasons.front().evidence["symbol"], "getenv");
  EXPECT_EQ(r.calls, 0);
}

TEST(gate, RejectsACompileErrorWithTheLog) {
  ir::Graph g = spec_graph();
  gate::GateReport r = gate::verify_kernel(g, kernel("out0[i * 10 + j] = undefined_name;"), quick());
  ASSERT_TRUE(r.has_reason(gate::reason::kCompileError)) << codes(r);
  EXPECT_NE(r.reasons.front().evidence["log"].get<std::string>().find("undefined_name"), std::string::npos);
}

TEST(gate, SymbolAllowlist) {
  for (const char* ok : {"expf", "__expf_finite", "memcpy", "memcpy@GLIBC_2.14", "malloc", "_Znwm", "_ZdlPvm",
                         "GOMP_parallel", "omp_get_num_threads", "pthread_create", "__cxa_throw",
                         "_ZNSt6thread4joinEv", "__extendhfsf2", "__divti3"})
    EXPECT_TRUE(gate::is_allowed_undefined_symbol(ok)) << ok;
  for (const char* bad : {"getenv", "fopen", "open", "system", "popen", "fork", "execve", "dlopen", "dlsym",
                          "socket", "connect", "clock_gettime", "gettimeofday", "time", "syscall", "omp_get_wtime",
                          "_ZNSt6chrono3_V212steady_clock3nowEv", "_ZNSt13random_device7_M_initERKSs", "mprotect"})
    EXPECT_FALSE(gate::is_allowed_undefined_symbol(bad)) << bad;
}

// shared_static_data on objects g++ compiles here: memory kept outside a
// call is found with its name; thread-local, read-only and the C++
// runtime's own data are not.
std::vector<gate::StaticData> statics_of(const std::string& source, const std::string& flags = "-std=gnu++20") {
  // One name per process: two test runs at once (two checkouts) must not
  // compile over each other's object.
  const std::string stem = ::testing::TempDir() + "/axon-statics-" + std::to_string(::getpid());
  const std::string src = stem + ".cpp", obj = stem + ".o";
  {
    std::ofstream f(src);
    f << source;
  }
  std::remove(obj.c_str());
  const std::string cmd = "g++ -O2 -fopenmp " + flags + " -c " + src + " -o " + obj;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return gate::shared_static_data(obj);
}

std::string names(const std::vector<gate::StaticData>& d) {
  std::string s;
  for (const gate::StaticData& x : d) s += x.section + ":" + x.symbol + ":" + std::to_string(x.bytes) + " ";
  return s;
}

TEST(gate, FindsStaticMemoryAKernelKeepsBetweenCalls) {
  auto scratch = statics_of("namespace { float g_scratch[100]; }\n"
                            "extern \"C\" void k(const float* x, float* y) {\n"
                            "  for (int i = 0; i < 100; ++i) g_scratch[i] = x[i];\n"
                            "  for (int i = 0; i < 100; ++i) y[i] = g_scratch[99 - i];\n}\n");
  ASSERT_EQ(scratch.size(), 1u) << names(scratch);
  EXPECT_EQ(scratch[0].section, ".bss");
  EXPECT_NE(scratch[0].symbol.find("g_scratch"), std::string::npos) << names(scratch);
  EXPECT_EQ(scratch[0].bytes, 400);

  auto initialised = statics_of("static int g_calls = 5;\n"
                                "extern \"C\" void k(const float* x, float* y) { y[0] = x[0] + g_calls++; }\n");
  ASSERT_EQ(initialised.size(), 1u) << names(initialised);
  EXPECT_EQ(initialised[0].section, ".data");

  auto common = statics_of("int g_last;\nvoid k(const float* x, float* y) { g_last = 1; y[0] = x[0]; }\n",
                           "-fcommon -x c");
  ASSERT_EQ(common.size(), 1u) << names(common);
  EXPECT_EQ(common[0].symbol, "g_last");

  // Per-thread scratch, a constant table and exceptions (the personality
  // pointer) keep nothing shared.
  EXPECT_TRUE(statics_of("static thread_local float t_scratch[100];\n"
                         "static const float kTable[4] = {1, 2, 3, 4};\n"
                         "#include <vector>\n"
                         "extern \"C\" void k(const float* x, float* y) {\n"
                         "  std::vector<float> v(x, x + 100), w(x, x + 100);  // a landing pad: the personality\n"
                         "  for (int i = 0; i < 100; ++i) t_scratch[i] = v[i] * w[i] * kTable[i & 3];\n"
                         "  for (int i = 0; i < 100; ++i) y[i] = t_scratch[i];\n}\n")
                  .empty());
}

// The outputs' fingerprint groups equal bytes together; any one changed bit
// (in each of the four lanes and in the tail) or another length moves it.
TEST(gate, FastFingerprintTellsBuffersApart) {
  std::vector<unsigned char> a(1000 + 13);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned char>(i * 37 + 11);
  const uint64_t h = gate::fast_fingerprint(a.data(), a.size());
  std::vector<unsigned char> copy = a;
  EXPECT_EQ(gate::fast_fingerprint(copy.data(), copy.size()), h);
  std::set<uint64_t> seen = {h};
  for (size_t byte : {size_t{0}, size_t{9}, size_t{17}, size_t{30}, size_t{500}, size_t{999}, size_t{1005}, a.size() - 1})
    for (int bit : {0, 7}) {
      std::vector<unsigned char> b = a;
      b[byte] ^= static_cast<unsigned char>(1 << bit);
      EXPECT_TRUE(seen.insert(gate::fast_fingerprint(b.data(), b.size())).second) << "byte " << byte << " bit " << bit;
    }
  EXPECT_NE(gate::fast_fingerprint(a.data(), a.size() - 1), h);
  std::vector<unsigned char> zeros(64, 0), zeros_longer(96, 0);
  EXPECT_NE(gate::fast_fingerprint(zeros.data(), zeros.size()), gate::fast_fingerprint(zeros_longer.data(), zeros_longer.size()));
  // The report quotes it for the inputs: the same value on every machine
  // and in every version (little-endian words, whatever the host).
  EXPECT_EQ(gate::hex64(h), "c7d6acf090f0e668");
}

TEST(gate, SourceScanSeesMacrosButNotSystemHeaders) {
  std::string pre =
      "# 1 \"/usr/include/sys/cdefs.h\"\n"
      "extern int f(int) __asm__(\"g\");\n"
      "# 5 \"candidate.cpp\"\n"
      "const char* s = \"asm syscall\"; // a string is not code\n"
      "unsigned long long t = __rdtsc();\n";
  std::vector<gate::Finding> f = gate::check_preprocessed_source(pre, {"candidate.cpp"});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].what, "__rdtsc");
  pre = "# 3 \"/tmp/x/candidate.cpp\"\nvoid k() { asm volatile(\"\"); }\n";
  f = gate::check_preprocessed_source(pre, {"candidate.cpp"});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].what, "asm");
}

TEST(gate, RooflineCountsTheSpecsWork) {
  ir::Graph g = spec_graph(R"(import numpy as np

def mm(a: "f32[8, 16]", b: "f32[16, 4]"):
    return a @ b + 1.0
)");
  gate::GateOptions o;
  o.cores = 1;
  gate::Roofline r = gate::roofline_floor(g, o);
  EXPECT_EQ(r.flops, 2.0 * 8 * 16 * 4 + 8 * 4);
  EXPECT_EQ(r.bytes, 4.0 * (8 * 16 + 16 * 4 + 8 * 4));
  EXPECT_NEAR(r.floor_ms, r.flops / (64 * 5e9) * 1e3, 1e-12);
  EXPECT_EQ(gate::multi_index({3, 4, 5}, 4 * 5 + 2 * 5 + 1), "[1, 2, 1]");
}

// What the plan promises a kernel cannot count past or recognise: every
// fill on A's calls, recorded soak calls past the thousandth, concurrent
// rounds on two slots with different inputs, a last call; the same plan for
// the same seed.
TEST(gate, BatteryPlanCoversFillsLateCallsAndThreads) {
  ir::Graph g = spec_graph();
  gate::Battery b = gate::plan_battery(g, 17, true);
  const gate::DriverPlan& p = b.plan;
  std::set<int> fills_on_a;
  for (const gate::PlannedCall& c : p.calls)
    if (c.set == 0) fills_on_a.insert(c.fill);
  // In the battery, every fill but A's own answers and the soak's kept outputs.
  EXPECT_EQ(fills_on_a.size(), p.fills.size() - 2) << "A must meet every other fill";
  EXPECT_FALSE(fills_on_a.count(gate::fill::kOutputsOfA));
  EXPECT_FALSE(fills_on_a.count(gate::fill::kKept));
  EXPECT_EQ(p.fills[gate::fill::kUntouched].kind, gate::FillKind::Untouched);
  EXPECT_EQ(p.fills[gate::fill::kKept].kind, gate::FillKind::Untouched);
  ASSERT_GE(p.soak.size(), 1050u);
  // The soak: a quarter of its calls filled and compared, the rest kept, one
  // in eight of those compared; the ten recorded ones filled and compared.
  int late = 0, recorded = 0, filled = 0, kept = 0, kept_compared = 0;
  for (size_t i = 0; i < p.soak.size(); ++i) {
    const gate::SoakCall& c = p.soak[i];
    if (c.record) {
      ++recorded;
      late += i >= 1000;
      EXPECT_TRUE(c.compare);
      EXPECT_NE(c.fill, gate::fill::kKept);
      continue;
    }
    if (c.fill == gate::fill::kKept) {
      ++kept;
      kept_compared += c.compare;
    } else {
      ++filled;
      EXPECT_TRUE(c.compare) << "a filled soak call is compared (and timed)";
    }
  }
  EXPECT_EQ(recorded, 10);
  EXPECT_GE(late, 1);
  const double n = static_cast<double>(filled + kept);
  EXPECT_NEAR(filled / n, 1.0 / 4, 0.05);
  EXPECT_NEAR(kept_compared / static_cast<double>(kept), 1.0 / 8, 0.05);
  ASSERT_GE(p.concurrent_a, 0);
  EXPECT_NE(p.slots[static_cast<size_t>(p.concurrent_a)].first, p.slots[static_cast<size_t>(p.concurrent_b)].first);
  EXPECT_GE(p.last_slot, 0);
  EXPECT_TRUE(p.timed);
  EXPECT_GE(b.user.calls, 1000);
  gate::Battery again = gate::plan_battery(g, 17, true);
  ASSERT_EQ(again.plan.soak.size(), p.soak.size());
  for (size_t i = 0; i < p.soak.size(); ++i) {
    EXPECT_EQ(again.plan.soak[i].slot, p.soak[i].slot);
    EXPECT_EQ(again.plan.soak[i].fill, p.soak[i].fill);
    EXPECT_EQ(again.plan.soak[i].record, p.soak[i].record);
    EXPECT_EQ(again.plan.soak[i].compare, p.soak[i].compare);
  }
  EXPECT_EQ(again.plan.fills[gate::fill::kRandom].data, p.fills[gate::fill::kRandom].data);
  gate::Battery other = gate::plan_battery(g, 18, true);
  EXPECT_NE(other.plan.fills[gate::fill::kRandom].data, p.fills[gate::fill::kRandom].data);
}

// Each set holds what verify::random_inputs draws from its seed (scaled for
// small and large_mean), in set order, and the report's hashes (each block
// hashed once, the mixed sets sharing theirs) are those of its own buffers.
TEST(gate, BatterySetsAreTheSeedsDraws) {
  ir::Graph g = spec_graph();
  gate::Battery b = gate::plan_battery(g, 17, true);
  std::vector<gate::InputSet> described = gate::describe_inputs(b);
  ASSERT_EQ(described.size(), b.sets.size());
  const std::vector<std::string> names = {"normal", "normal#2", "shifted_mean", "wide_range", "large",
                                          "ties",   "tiny",     "small",        "large_mean"};
  for (size_t k = 0; k < b.sets.size(); ++k) {
    const gate::BatterySet& s = b.sets[k];
    if (k < names.size()) {
      EXPECT_EQ(s.name, names[k]);
      verify::Distribution d = verify::Distribution::Normal;
      if (k >= 2 && k < 7) {
        ASSERT_TRUE(verify::parse_distribution(s.name, &d)) << s.name;
      }
      verify::Draw draw{d};
      if (s.name == "small") draw.scale = 1e-4;
      if (s.name == "large_mean") draw.offset = 1000;
      std::vector<ir::Tensor> want = verify::random_inputs(g, s.seed, draw);
      for (size_t p = 0; p < g.params.size(); ++p) {
        EXPECT_EQ(s.inputs[p].data, want[p].data) << s.name << " parameter " << p;
        EXPECT_EQ(b.plan.blocks[static_cast<size_t>(s.blocks[p])], verify::to_buffer(want[p], g.params[p].type.dtype))
            << s.name << " parameter " << p;
      }
    }
    EXPECT_EQ(described[k].name, s.name);
    ASSERT_EQ(described[k].hashes.size(), g.params.size());
    for (size_t p = 0; p < g.params.size(); ++p) {
      const std::vector<uint8_t>& block = b.plan.blocks[static_cast<size_t>(s.blocks[p])];
      EXPECT_EQ(described[k].hashes[p], gate::hex64(gate::fast_fingerprint(block.data(), block.size()))) << s.name;
    }
  }
  EXPECT_EQ(b.sets.size(), names.size() + g.params.size());
}

// Drawn on two threads (the second core free from the start), the battery
// is the one drawn on one: each set's values, blocks and order depend on the
// seed alone.
TEST(gate, BatteryDrawnOnTwoThreadsIsTheSame) {
  ir::Graph g = spec_graph();
  gate::Battery one = gate::plan_battery(g, 17, true);
  std::promise<void> ready;
  ready.set_value();
  const std::shared_future<void> free_core = ready.get_future().share();
  gate::Battery two = gate::plan_battery(g, 17, true, &free_core);
  ASSERT_EQ(two.sets.size(), one.sets.size());
  for (size_t k = 0; k < one.sets.size(); ++k) {
    EXPECT_EQ(two.sets[k].name, one.sets[k].name);
    EXPECT_EQ(two.sets[k].seed, one.sets[k].seed);
    EXPECT_EQ(two.sets[k].blocks, one.sets[k].blocks);
    ASSERT_EQ(two.sets[k].inputs.size(), one.sets[k].inputs.size());
    for (size_t p = 0; p < one.sets[k].inputs.size(); ++p)
      EXPECT_EQ(two.sets[k].inputs[p].data, one.sets[k].inputs[p].data) << one.sets[k].name;
  }
  EXPECT_EQ(two.plan.blocks, one.plan.blocks);
  gate::Battery other = gate::plan_battery(g, 18, true, &free_core);
  EXPECT_NE(other.plan.blocks, one.plan.blocks);
}

// What runs when (docs/gate.md, "Verdict time"): the plain process starts
// only after the sanitized run is done, the optimised run once the
// references of A and B are there, beside the plain process and the other
// references, and its slots (the rounds, the soak) after both have ended:
// the driver reports how long it held for them. The phases are reported as
// they end.
TEST(gate, TheUserRunFollowsTheSanitizedRun) {
  ir::Graph g = spec_graph();
  gate::GateOptions o = quick();
  o.run_sanitizer = true;
  gate::GateReport r = gate::verify_kernel(g, codegen::emit_naive_cpp(g).source, o);
  EXPECT_TRUE(r.accepted) << codes(r);
  auto at = [&](const std::string& phase) {
    for (size_t i = 0; i < r.phases_s.size(); ++i) {
      if (r.phases_s[i].first == phase) return static_cast<int>(i);
    }
    ADD_FAILURE() << "no phase " << phase;
    return -1;
  };
  EXPECT_LT(at("sanitized_run"), at("first_runs"));
  EXPECT_LT(at("first_runs"), at("fills_wait"));
  EXPECT_LT(at("fills_wait"), at("user_run"));
  EXPECT_LT(at("user_run"), at("reference_wait"));
  EXPECT_LT(at("reference_wait"), at("optimised_run"));
  EXPECT_LT(at("user_run"), at("optimised_run"));
  EXPECT_LT(at("optimised_run"), at("held"));
  EXPECT_GE(r.phases_s[static_cast<size_t>(at("held"))].second, 0.0);
}

// A kernel that is right only while its output arrives as NaN, one that
// turns wrong after 50 calls, and one with a shared static accumulator are
// each rejected for their class.
TEST(gate, NamesTheClassOfAWatchedKernel) {
  ir::Graph g = spec_graph();
  struct Case {
    std::string source;
    const char* code;
  } cases[] = {
      {"#include <cmath>\nextern \"C\" void scaled_exp(const float* x, const float* s, float* out0) {\n"
       "  const float bias = std::isnan(out0[0]) ? 0.0f : 1.0f;\n"
       "  for (int i = 0; i < 60; ++i) out0[i] = std::exp(x[i] * 0.5f) * s[i % 10] + bias;\n}\n",
       gate::reason::kOutputDependent},
      {"#include <cmath>\nextern \"C\" void scaled_exp(const float* x, const float* s, float* out0) {\n"
       "  static int calls = 0;\n  const float bias = ++calls > 50 ? 1.0f : 0.0f;\n"
       "  for (int i = 0; i < 60; ++i) out0[i] = std::exp(x[i] * 0.5f) * s[i % 10] + bias;\n}\n",
       gate::reason::kCallCountDependent},
      {"#include <cmath>\nstatic volatile float g_row[10];\nstatic volatile float g_sink;\n"
       "extern \"C\" void scaled_exp(const float* x, const float* s, float* out0) {\n"
       "  for (int i = 0; i < 6; ++i) {\n"
       "    for (int j = 0; j < 10; ++j) g_row[j] = std::exp(x[i * 10 + j] * 0.5f) * s[j];\n"
       "    float sink = 0.0f;\n"
       "    for (int r = 0; r < 64; ++r) for (int j = 0; j < 10; ++j) sink = sink + g_row[j];\n"
       "    g_sink = sink;\n"
       "    for (int j = 0; j < 10; ++j) out0[i * 10 + j] = g_row[j];\n  }\n}\n",
       gate::reason::kNotReentrant},
  };
  for (const Case& c : cases) {
    gate::GateReport r = gate::verify_kernel(g, c.source, quick());
    EXPECT_FALSE(r.accepted) << c.source;
    EXPECT_TRUE(r.has_reason(c.code)) << c.code << "\n" << codes(r) << c.source;
  }
}

// A call whose outputs are an earlier record's bit for bit is written to
// outputs.bin once: the later record names it (same=R) and is read back
// with the earlier one's bytes.
TEST(gate, RepeatedOutputsAreRecordedOnce) {
  ir::Graph g = spec_graph();
  gate::GateOptions o = quick();
  o.time_kernel = true;
  o.work_dir = testing::TempDir() + "axon_gate_same_" + std::to_string(getpid());
  gate::GateReport r = gate::verify_kernel(g, codegen::emit_naive_cpp(g).source, o);
  EXPECT_TRUE(r.accepted) << codes(r);
  std::ifstream events(o.work_dir + "/events_optimised.log");
  int records = 0, same = 0;
  for (std::string line; std::getline(events, line);) {
    if (line.rfind("end ", 0) != 0) continue;
    ++records;
    const size_t at = line.find(" same=");
    if (at == std::string::npos) continue;
    ++same;
    const int call = std::atoi(line.c_str() + line.find(" call=") + 6);
    EXPECT_LT(std::atoi(line.c_str() + at + 6), call) << line;  // an earlier record
  }
  // The slots' calls after their baselines (rounds, soak, last) and the
  // battery's repeated calls on A at least.
  EXPECT_GE(same, 15) << records;
  std::ifstream outputs(o.work_dir + "/outputs_optimised.bin", std::ios::binary | std::ios::ate);
  EXPECT_EQ(static_cast<int64_t>(outputs.tellg()), (records - same) * 60 * 4);

  // Read back by hand: a record with same=R gets R's bytes; one that names
  // no earlier record ends the log there.
  gate::DriverPlan plan;
  plan.output_bytes = {8};
  const std::string ev = o.work_dir + "/same_events.log", out = o.work_dir + "/same_outputs.bin";
  std::ofstream(ev) << "ready threads=1\nend call=0 seq=0 set=0\nend call=1 seq=1 set=0 same=0\n"
                       "end call=2 seq=2 set=1\nend call=3 seq=3 set=1 same=2\nend call=4 seq=4 set=1 same=9\n";
  std::ofstream(out, std::ios::binary) << "abcdefghABCDEFGH";
  gate::DriverLog log = gate::read_driver_log(plan, ev, out);
  ASSERT_EQ(log.calls.size(), 4u);
  auto text = [](const gate::CallRecord& c) { return std::string(c.outputs[0].begin(), c.outputs[0].end()); };
  EXPECT_EQ(text(log.calls[1]), "abcdefgh");
  EXPECT_EQ(text(log.calls[2]), "ABCDEFGH");
  EXPECT_EQ(text(log.calls[3]), "ABCDEFGH");
  std::system(("rm -rf " + o.work_dir).c_str());
}

// The soak compares its compared calls with their slot's baseline on both cores when
// the outputs span several chunks: a kernel that turns wrong after 700
// calls (in the soak) in its last element only (the last chunk) is caught.
TEST(gate, TheSoakComparesEveryChunkOfALargeOutput) {
  constexpr const char* kLarge = R"(import numpy as np

def scaled_exp(x: "f32[600, 1000]", s: "f32[1000]"):
    return np.exp(x * 0.5) * s
)";
  ir::Graph g = spec_graph(kLarge);
  const std::string body =
      "#include <cmath>\nextern \"C\" void scaled_exp(const float* x, const float* s, float* out0) {\n"
      "  static int calls = 0;\n"
      "  for (int i = 0; i < 600 * 1000; ++i) out0[i] = std::exp(x[i] * 0.5f) * s[i % 1000];\n"
      "  if (++calls > 700) out0[600 * 1000 - 1] += 1.0f;\n}\n";
  gate::GateOptions o = quick();
  o.time_kernel = true;
  o.repeat_s = 60;  // every planned soak call is made, on a loaded host too (the 700th among them)
  o.work_dir = testing::TempDir() + "axon_gate_chunks_" + std::to_string(getpid());
  gate::GateReport r = gate::verify_kernel(g, body, o);
  EXPECT_FALSE(r.accepted);
  EXPECT_TRUE(r.has_reason(gate::reason::kCallCountDependent)) << codes(r);
  // The soak's comparison itself found the calls that differ from their
  // slots' baselines (made before the 700th call) and recorded the first
  // one of each slot with its two rechecks, not only the judge on a
  // recorded call.
  std::ifstream events(o.work_dir + "/events_optimised.log");
  std::vector<std::string> ends;
  for (std::string line; std::getline(events, line);)
    if (line.rfind("end ", 0) == 0) ends.push_back(line);
  int drifts = 0;
  for (size_t i = 0; i + 2 < ends.size(); ++i)
    drifts += ends[i].find(" phase=soak ") != std::string::npos &&
              ends[i + 1].find(" phase=recheck ") != std::string::npos &&
              ends[i + 2].find(" phase=recheck ") != std::string::npos;
  EXPECT_GE(drifts, 2);
  std::system(("rm -rf " + o.work_dir).c_str());
}

// The wall timeout counts from the moment the wall-clock file exists (the
// optimised run's hold): a child that is still before it is not charged.
TEST(gate, SandboxWallClockStartsAtItsFile) {
  const std::string dir = testing::TempDir();
  const std::string log = dir + "axon_gate_sandbox_" + std::to_string(getpid()) + ".log";
  gate::SandboxLimits lim;
  lim.wall_timeout_s = 0.3;
  gate::SandboxResult plain = gate::run_sandboxed({"/bin/sleep", "1"}, gate::child_environment({}), dir, log, lim);
  EXPECT_TRUE(plain.killed_wall) << plain.describe();
  lim.wall_clock_file = "axon_gate_no_such_file_" + std::to_string(getpid());
  gate::SandboxResult held = gate::run_sandboxed({"/bin/sleep", "1"}, gate::child_environment({}), dir, log, lim);
  EXPECT_TRUE(held.exited && held.exit_code == 0) << held.describe();
  EXPECT_FALSE(held.killed_wall);
  std::remove(log.c_str());
}

// The battery watches several calls at once (docs/gate.md, "Verdict
// time"): a kernel whose detached thread rewrites one call's output 30 ms
// after that call returned, while the next calls run, is still caught, and
// the calls were watched in groups (several begin lines before their end
// lines).
TEST(gate, TheBatterysGroupedWatchSeesAWriteAfterReturn) {
  ir::Graph g = spec_graph();
  const std::string body =
      "#include <chrono>\n#include <cmath>\n#include <thread>\n"
      "extern \"C\" void scaled_exp(const float* x, const float* s, float* out0) {\n"
      "  static int calls = 0;\n"
      "  for (int i = 0; i < 60; ++i) out0[i] = std::exp(x[i] * 0.5f) * s[i % 10];\n"
      "  if (++calls != 6) return;\n"  // the battery's call 5, inside a group
      "  std::thread([out0] {\n"
      "    std::this_thread::sleep_for(std::chrono::milliseconds(30));\n"
      "    out0[7] = 1e9f;\n"
      "  }).detach();\n}\n";
  gate::GateOptions o = quick();
  o.work_dir = testing::TempDir() + "axon_gate_watch_" + std::to_string(getpid());
  gate::GateReport r = gate::verify_kernel(g, body, o);
  EXPECT_FALSE(r.accepted);
  ASSERT_TRUE(r.has_reason(gate::reason::kWorkAfterReturn)) << codes(r);
  bool changed = false;
  for (const gate::Reason& x : r.reasons)
    if (x.code == gate::reason::kWorkAfterReturn && x.message.find("outputs changed") != std::string::npos) {
      changed = true;
      EXPECT_EQ(x.evidence["call"], 5) << x.evidence.dump();
    }
  EXPECT_TRUE(changed) << codes(r);
  std::ifstream events(o.work_dir + "/events_optimised.log");
  int begins_in_a_row = 0, most = 0;
  for (std::string line; std::getline(events, line);) {
    if (line.rfind("begin call=", 0) == 0 && line.find("call=-") == std::string::npos) most = std::max(most, ++begins_in_a_row);
    if (line.rfind("end ", 0) == 0) begins_in_a_row = 0;
  }
  EXPECT_GE(most, 3);
  std::system(("rm -rf " + o.work_dir).c_str());
}

// The soak's compared calls are compared whole with their slot's baseline
// (by keyed digests): a kernel whose calls from the 1000th on (in the soak,
// after the rounds) differ from the earlier ones in the lowest bit of the
// last element only is recorded at the first compared one of them with its
// two rechecks, and at none before; one that is wrong by far from that call
// on is rejected as call_count_dependent.
TEST(gate, TheSoakSeesLateCallsDifferInOneBit) {
  constexpr const char* kLarge = R"(import numpy as np

def scaled_exp(x: "f32[600, 1000]", s: "f32[1000]"):
    return x * s + 0.5
)";
  ir::Graph g = spec_graph(kLarge);
  auto kernel_with = [](const std::string& change) {
    return "#include <cmath>\n#include <cstring>\n#include <cstdint>\n"
           "extern \"C\" void scaled_exp(const float* x, const float* s, float* out0) {\n"
           // Counted atomically: the concurrent rounds call it from two
           // threads, and a lost increment would move the 1000th call.
           "  static int calls = 0;\n"
           "  for (int i = 0; i < 600 * 1000; ++i) out0[i] = x[i] * s[i % 1000] + 0.5f;\n"
           // A few ms a call, so that the rounds make a few hundred calls
           // at most and the 1000th is the soak's.
           "  for (volatile int spin = 0; spin < 2000000; ++spin) {\n  }\n"
           "  if (__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED) < 1000) return;\n" + change + "}\n";
  };
  struct Case {
    std::string change;
    bool rejected;
  } cases[] = {
      {"  uint32_t b;\n  std::memcpy(&b, &out0[600 * 1000 - 1], 4);\n  b ^= 1;\n"
       "  std::memcpy(&out0[600 * 1000 - 1], &b, 4);\n",
       false},
      // Every element far from its value (adding 1 to one element would
      // change nothing where it is large). A product and a sum, so that no
      // input set has an element without a finite bound (np.exp overflows
      // on large_mean's, and the slot of the 1000th call is drawn).
      {"  for (int i = 0; i < 600 * 1000; ++i) out0[i] = out0[i] == 12345.0f ? 54321.0f : 12345.0f;\n", true},
  };
  for (const Case& c : cases) {
    gate::GateOptions o = quick();
    o.time_kernel = true;
    o.repeat_s = 60;  // every planned soak call is made
    o.work_dir = testing::TempDir() + "axon_gate_bit_" + std::to_string(getpid());
    gate::GateReport r = gate::verify_kernel(g, kernel_with(c.change), o);
    if (c.rejected) {
      EXPECT_FALSE(r.accepted);
      EXPECT_TRUE(r.has_reason(gate::reason::kCallCountDependent)) << codes(r);
    }
    std::ifstream events(o.work_dir + "/events_optimised.log");
    std::vector<std::string> ends;
    for (std::string line; std::getline(events, line);)
      if (line.rfind("end ", 0) == 0) ends.push_back(line);
    int drifts = 0, early = 0;
    for (size_t i = 0; i + 2 < ends.size(); ++i)
      if (ends[i].find(" phase=soak ") != std::string::npos && ends[i].find(" same=") == std::string::npos &&
          ends[i + 1].find(" phase=recheck ") != std::string::npos &&
          ends[i + 2].find(" phase=recheck ") != std::string::npos) {
        ++drifts;
        const size_t at = ends[i].find(" seq=");
        early += std::stoll(ends[i].substr(at + 5)) < 999;
      }
    EXPECT_GE(drifts, 1) << c.change;
    EXPECT_EQ(early, 0) << c.change;
    std::system(("rm -rf " + o.work_dir).c_str());
  }
}

// A slow kernel (about 20 ms a call on an idle 2-core Zen 3) that keeps its row in a static array
// across a wait is not reentrant: the concurrent rounds, which end for slow
// calls once 8 overlapped calls add up to 400 ms of overlap rather than
// after 64 of them, see a wrong call, and did not need 5 s to.
TEST(gate, TheRoundsCatchASlowKernelsSharedScratch) {
  ir::Graph g = spec_graph();
  const std::string body =
      "#include <cmath>\nstatic volatile float g_row[10];\n"
      "extern \"C\" void scaled_exp(const float* x, const float* s, float* out0) {\n"
      "  for (int i = 0; i < 6; ++i) {\n"
      "    for (int j = 0; j < 10; ++j) g_row[j] = std::exp(x[i * 10 + j] * 0.5f) * s[j];\n"
      "    for (volatile long spin = 0; spin < 10000000; ++spin) {\n    }\n"
      "    for (int j = 0; j < 10; ++j) out0[i * 10 + j] = g_row[j];\n  }\n}\n";
  gate::GateOptions o = quick();
  o.work_dir = testing::TempDir() + "axon_gate_slow_rounds_" + std::to_string(getpid());
  gate::GateReport r = gate::verify_kernel(g, body, o);
  EXPECT_FALSE(r.accepted);
  ASSERT_TRUE(r.has_reason(gate::reason::kNotReentrant)) << codes(r);
  for (const gate::Reason& x : r.reasons)
    if (x.code == gate::reason::kNotReentrant) EXPECT_EQ(x.evidence["wrong_call"]["phase"], "concurrent") << x.evidence.dump();
  gate::DriverLog log = gate::read_driver_log(gate::DriverPlan{}, o.work_dir + "/events_optimised.log", "");
  EXPECT_GE(log.rounds, 8);
  EXPECT_GE(log.overlaps, 8);
  EXPECT_LT(log.overlaps, 64);  // ended by the overlapped time
  EXPECT_GE(log.overlap_ms, 400);
  std::system(("rm -rf " + o.work_dir).c_str());
}

// The verdict's comparisons with the reference (comparisons.h): equal bytes
// of one set share one check, whichever run or buffer returned them; bytes
// without a poisoned element share it after the poison fill too; an
// element still holding the poison is unwritten after the poison fill and
// a wrong NaN otherwise; other bytes get checks of their own.
TEST(gate, ComparisonsAreSharedAcrossRunsAndFills) {
  ir::Graph g = spec_graph();
  gate::Battery b = gate::plan_battery(g, 17, true);
  gate::References refs(g, b);
  gate::Comparisons cmp(g, refs);
  const ir::DType dt = g[g.outputs[0]].type.dtype;
  const std::vector<uint8_t> right = verify::to_buffer(refs.reference(0)[0], dt);
  const std::vector<uint8_t> copy = right;  // another run's buffer, the same bytes
  std::vector<uint8_t> holed = right;
  std::fill(holed.begin() + 4 * 7, holed.begin() + 4 * 8, uint8_t{0xFF});  // element 7 left as poisoned
  const std::vector<uint8_t> other_set = verify::to_buffer(refs.reference(1)[0], dt);
  std::vector<const gate::OutputCheck*> c = cmp.check({{0, 0, false, &right},
                                                       {0, 0, false, &copy},
                                                       {0, 0, true, &copy},
                                                       {0, 0, true, &holed},
                                                       {0, 0, false, &holed},
                                                       {0, 0, false, &other_set},
                                                       {1, 0, false, &other_set}});
  ASSERT_EQ(c.size(), 7u);
  EXPECT_EQ(c[1], c[0]);
  EXPECT_EQ(c[2], c[0]);
  EXPECT_TRUE(c[0]->cmp.ok());
  EXPECT_EQ(c[0]->unwritten, 0);
  EXPECT_NE(c[3], c[0]);
  EXPECT_EQ(c[3]->unwritten, 1);
  EXPECT_EQ(c[3]->first_unwritten, 7);
  EXPECT_TRUE(c[3]->cmp.ok());  // the unwritten element is judged as such, not again as wrong
  EXPECT_NE(c[4], c[3]);
  EXPECT_FALSE(c[4]->cmp.ok());  // without the poison fill it is a NaN where the reference is not
  EXPECT_EQ(c[4]->cmp.worst_index, 7);
  EXPECT_FALSE(c[5]->cmp.ok());  // B's answers are wrong for A
  EXPECT_TRUE(c[6]->cmp.ok());
  EXPECT_NE(c[6], c[5]);
  // Asked again later (the user run's outputs, say): the same checks.
  EXPECT_EQ(cmp.check({{0, 0, true, &right}})[0], c[0]);
  EXPECT_EQ(cmp.check({{0, 0, true, &holed}})[0], c[3]);
}

TEST(gate, EveryReasonCodeIsListed) {
  EXPECT_EQ(gate::all_reason_codes().size(), 19u);
}

}  // namespace
}  // namespace axon
