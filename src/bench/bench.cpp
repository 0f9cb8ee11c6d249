// bench: the run of `axon bench`, workload by workload; the contract is in
// bench.h, the page and the CSV in bench_report.cpp, the format in docs/bench.md.
#include "bench/bench.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>

#include "analysis/cost.h"
#include "backend/backend.h"
#include "codegen/cpu/stream_triad.h"
#include "frontend/spec.h"
#include "optimize/optimize.h"
#include "runtime/compile_shared.h"
#include "runtime/measure.h"
#include "runtime/time_calls.h"
#include "support/affinity.h"
#include "support/diagnostic.h"
#include "support/in_child.h"
#include "support/npy.h"
#include "target/target.h"
#include "transforms/pipeline.h"

namespace axon::bench {

using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<fs::path> search_roots() {
  std::vector<fs::path> roots;
  if (const char* s = std::getenv("AXON_SOURCE_DIR"); s && *s) roots.emplace_back(s);
  std::error_code ec;
  roots.push_back(fs::current_path(ec));
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  // The binary sits in a build folder inside the repository (build/axon) or one level deeper.
  if (!ec)
    for (fs::path p = exe.parent_path(); !p.empty() && roots.size() < 6; p = p.parent_path()) {
      roots.push_back(p);
      if (p == p.parent_path()) break;
    }
  return roots;
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

std::string last_line(const fs::path& file) {
  std::ifstream f(file);
  std::string line, last;
  while (std::getline(f, line))
    if (!line.empty()) last = line;
  return last.size() > 200 ? last.substr(0, 200) : last;
}

// Runs argv with stdout and stderr into `log`: the exit status, 128 + the
// signal when killed, -1 when it could not be started.
int run_logged(const std::vector<std::string>& argv, const fs::path& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::string log_path = log.string();
  support::ScopedStartMask all_cpus;  // the peers get every core, not the one OpenMP pinned this thread to
  pid_t pid = fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execvp(args[0], args.data());
    _exit(127);
  }
  if (pid < 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

// The fractions of the machine a time reaches: of the roofline floor, of the
// bandwidth ceiling (bytes / time over target::bandwidth_ceiling_gbs: the
// best real traffic of the probe's loops), of the ceiling of the kernel's
// mix of reads and writes (mix_gbs, target::bandwidth_ceiling_of_mix; where
// known) and of the FMA peak (FLOPs / time).
json fractions(double ms, const analysis::Cost& c, double floor_ms, const target::Peaks& p, double mix_gbs) {
  if (ms <= 0) return json::object();
  double s = ms * 1e-3, ceiling = target::bandwidth_ceiling_gbs(p);
  json f = {{"roofline", floor_ms > 0 ? floor_ms / ms : 0.0},
            {"bandwidth", ceiling > 0 ? c.bytes / s / (ceiling * 1e9) : 0.0},
            {"fma", p.fma_gflops_all > 0 ? c.flops / s / (p.fma_gflops_all * 1e9) : 0.0}};
  if (mix_gbs > 0) f["bandwidth_of_mix"] = c.bytes / s / (mix_gbs * 1e9);
  return f;
}

// A fraction of the bandwidth ceiling above this is not a fast kernel but a
// wrong count or a warm cache: flagged in the workload's "anomalies".
constexpr double kAnomalousBandwidthFraction = 1.05;

json peaks_json(const target::Peaks& p) {
  return {{"fma_gflops_1t", p.fma_gflops_1t},     {"fma_gflops_all", p.fma_gflops_all},
          {"stream_gbs_1t", p.stream_gbs_1t},     {"stream_gbs_all", p.stream_gbs_all},
          {"read_gbs_all", p.read_gbs_all},       {"nt_copy_gbs_all", p.nt_copy_gbs_all},
          {"nt_triad_gbs_all", p.nt_triad_gbs_all}, {"bandwidth_ceiling_gbs", target::bandwidth_ceiling_gbs(p)}};
}

// Each peak the higher of the two probes'.
target::Peaks better_peaks(const target::Peaks& a, const target::Peaks& b) {
  target::Peaks p;
  p.fma_gflops_1t = std::max(a.fma_gflops_1t, b.fma_gflops_1t);
  p.fma_gflops_all = std::max(a.fma_gflops_all, b.fma_gflops_all);
  p.stream_gbs_1t = std::max(a.stream_gbs_1t, b.stream_gbs_1t);
  p.stream_gbs_all = std::max(a.stream_gbs_all, b.stream_gbs_all);
  p.read_gbs_all = std::max(a.read_gbs_all, b.read_gbs_all);
  p.nt_copy_gbs_all = std::max(a.nt_copy_gbs_all, b.nt_copy_gbs_all);
  p.nt_triad_gbs_all = std::max(a.nt_triad_gbs_all, b.nt_triad_gbs_all);
  return p;
}

// The peer with the least `key` (ms) among those timed ("ok"), and that
// time; {"", 0} when none was.
std::pair<std::string, double> fastest_peer(const json& peers, const char* key) {
  std::string best;
  double best_ms = 0;
  for (const auto& [p, row] : peers.items()) {
    double ms = row.value(key, 0.0);
    if (row.value("status", "") != "ok" || ms <= 0) continue;
    if (best.empty() || ms < best_ms) best = p, best_ms = ms;
  }
  return {best, best_ms};
}

json kernel_row(const runtime::Measurement& m) {
  if (!m.verified)
    return {{"status", "failed: " + (m.error.empty() ? std::string("not verified") : m.error)}};
  return {{"status", "ok"}, {"ms", m.ms},         {"min_ms", m.min_ms},
          {"max_ms", m.max_ms}, {"reps", m.reps}, {"copies", m.copies},
          {"max_error_over_budget", m.max_error_over_budget}};
}

struct Context {
  const BenchOptions& opts;
  target::Target target;
  double cold_bytes = 0;
  fs::path out, harness;
  std::string stream_lib;  // the triad kernel (codegen/cpu/stream_triad.h) as a library; "" when not built
};

bool interrupted(const Context& cx) { return cx.opts.interrupt && cx.opts.interrupt->load(); }

json stopped(json w) {
  w["interrupted"] = true;
  return w;
}

void say(const Context& cx, const std::string& line) {
  if (cx.opts.on_line) cx.opts.on_line(line);
}

// Every requested peer gets a row: from peers.py's answer, or the reason
// there is none. With `axon_lib` (axon's kernel built as a shared library)
// and interleave_rounds > 0, peers.py also checks and times that kernel and
// then times every contender that passed in interleaved bursts.
// With the triad library too, the triad takes its turn in those rounds
// (peers.py --stream). Returns {"peers": {name: row}, "kernels": {"axon":
// row}, "stream": row} ("kernels" and "stream" only when peers.py answered
// about them).
json run_peers(const Context& cx, const ir::Graph& g, const std::string& spec, const runtime::Measurer& m,
               const std::string& name, const std::string& axon_lib) {
  json rows = json::object();
  auto all_failed = [&](const std::string& why) {
    for (const std::string& p : cx.opts.peers) rows[p] = {{"status", "failed: " + why}};
    return json{{"peers", rows}};
  };
  if (cx.opts.peers.empty()) return json{{"peers", rows}};
  if (cx.harness.empty()) return all_failed("bench/harness/peers.py not found (set AXON_BENCH_HARNESS)");
  fs::path work = cx.out / "work" / name;
  fs::create_directories(work);
  std::vector<std::string> argv = {cx.opts.python, (cx.harness / "peers.py").string(), "--spec", spec,
                                   "--entry", g.entry, "--inputs"};
  std::vector<fs::path> written;
  auto npy = [&](const std::string& stem, size_t i, const ir::Tensor& t) {
    fs::path p = work / (stem + std::to_string(i) + ".npy");
    write_npy_f64(p.string(), t.type.shape, t.data);
    written.push_back(p);
    argv.push_back(p.string());
  };
  for (size_t i = 0; i < g.params.size(); ++i) npy("in", i, m.inputs(0)[i]);
  argv.push_back("--reference");
  for (size_t j = 0; j < g.outputs.size(); ++j) npy("ref", j, m.reference(0)[j]);
  argv.push_back("--bound");
  for (size_t j = 0; j < g.outputs.size(); ++j) npy("bound", j, m.bounds(0)[j]);
  fs::path result = work / "peers.json", log = cx.out / "logs" / (name + ".peers.log");
  argv.insert(argv.end(), {"--peers", join(cx.opts.peers, ","), "--min-seconds", std::to_string(cx.opts.min_seconds),
                           "--rotate-bytes", std::to_string(static_cast<long long>(cx.cold_bytes)), "--out",
                           result.string()});
  if (!axon_lib.empty() && cx.opts.interleave_rounds > 0) {
    std::string dtypes;
    for (size_t j = 0; j < g.outputs.size(); ++j) {
      if (j) dtypes += ",";
      dtypes += ir::dtype_name(m.reference(0)[j].type.dtype);
    }
    argv.insert(argv.end(), {"--kernel", "axon=" + axon_lib + ":" + g.entry, "--kernel-output-dtypes", dtypes,
                             "--interleave-rounds", std::to_string(cx.opts.interleave_rounds), "--burst-seconds",
                             std::to_string(cx.opts.burst_seconds), "--burst-gap", std::to_string(cx.opts.burst_gap_s)});
    if (!cx.stream_lib.empty())
      argv.insert(argv.end(), {"--stream", cx.stream_lib + ":" + codegen::kStreamTriadEntry, "--stream-elements",
                               std::to_string(target::stream_triad_elements(cx.target))});
  }
  fs::remove(result);
  int rc = run_logged(argv, log);
  for (const fs::path& p : written) fs::remove(p);  // up to hundreds of MB per workload
  if (rc != 0) {
    std::string why = rc < 0 ? "could not start " + cx.opts.python : "peers.py exited " + std::to_string(rc);
    std::string tail = last_line(log);
    return all_failed(why + (tail.empty() ? "" : ": " + tail) + " (see logs/" + name + ".peers.log)");
  }
  json answer;
  try {
    std::ifstream f(result);
    answer = json::parse(f);
  } catch (const std::exception& e) {
    return all_failed(std::string("unreadable peers.json: ") + e.what());
  }
  for (const std::string& p : cx.opts.peers) {
    const json& peers = answer["peers"];
    rows[p] = peers.contains(p) ? peers[p] : json{{"status", "failed: no answer from peers.py"}};
  }
  json out = {{"peers", rows}};
  if (answer.contains("kernels")) out["kernels"] = answer["kernels"];
  if (answer.contains("stream")) out["stream"] = answer["stream"];
  if (answer.contains("cpus")) out["cpus"] = answer["cpus"];
  return out;
}

double median(std::vector<double> v) { return runtime::timing_of(std::move(v)).median_ms; }

// One row per peer from the rounds of peers.py: a peer that was timed in
// every round keeps its last row, with median_ms the median of its round
// medians and round_ms the list; one that failed in any round keeps that
// round's row (its status says why).
json combine_peer_rounds(const std::vector<json>& rounds) {
  if (rounds.empty()) return json::object();
  if (rounds.size() == 1) return rounds[0];
  json rows = json::object();
  for (auto& [p, last] : rounds.back().items()) {
    std::vector<double> ms;
    json row = last;
    for (const json& r : rounds) {
      const json& x = r.contains(p) ? r[p] : json{{"status", "failed: no answer in one round"}};
      if (x.value("status", "") != "ok") {
        row = x;
        ms.clear();
        break;
      }
      ms.push_back(x.value("median_ms", 0.0));
    }
    if (!ms.empty()) {
      row["round_ms"] = ms;
      row["median_ms"] = median(ms);
    }
    rows[p] = row;
  }
  return rows;
}

// The interleaved times of one contender over the rounds: its row gains
// interleaved_ms (the median of the rounds' interleaved medians) and
// interleaved_round_ms; a round without one (the contender failed there,
// or was not interleaved) drops them, so no number rests on part of the rounds.
void combine_interleaved(json& row, const std::vector<const json*>& per_round) {
  row.erase("interleaved_ms");
  row.erase("burst_ms");
  std::vector<double> ms;
  for (const json* r : per_round) {
    if (!r || !r->contains("interleaved_ms")) return;
    ms.push_back((*r)["interleaved_ms"].get<double>());
  }
  if (ms.empty()) return;
  row["interleaved_round_ms"] = ms;
  row["interleaved_ms"] = median(ms);
}

// A contender's bandwidth as a fraction of the triad's, paired burst by
// burst: in each interleaved round of each peers run, (bytes / its burst
// ms) / (triad bytes / the triad's burst ms in that round); the median over
// all of them. Each pair was timed within about a second of the same
// process, so a change of the machine's bandwidth during the run moves both
// sides of a pair (the single probe can be tens of percent off by the time a
// workload runs). 0 when a round lacks either side's bursts.
double paired_stream_fraction(double bytes, const std::vector<const json*>& contender,
                              const std::vector<const json*>& stream) {
  std::vector<double> f;
  for (size_t r = 0; r < contender.size() && r < stream.size(); ++r) {
    const json* c = contender[r];
    const json* t = stream[r];
    if (!c || !t || !c->contains("burst_ms") || !t->contains("burst_ms")) return 0;
    const json &cb = (*c)["burst_ms"], &tb = (*t)["burst_ms"];
    double triad_bytes = t->value("bytes_per_call", 0.0);
    if (cb.size() != tb.size() || triad_bytes <= 0) return 0;
    for (size_t i = 0; i < cb.size(); ++i) {
      double c_ms = cb[i].get<double>(), t_ms = tb[i].get<double>();
      if (c_ms <= 0 || t_ms <= 0) return 0;
      f.push_back((bytes / c_ms) / (triad_bytes / t_ms));
    }
  }
  if (f.empty()) return 0;
  return median(std::move(f));
}

// The triad's interleaved bandwidth over the rounds (w["interleaved"]
// ["stream"]) and the paired fractions of axon and of the best peer.
void apply_stream(json& w, const std::vector<json>& stream_rounds, const std::vector<json>& kernel_rounds,
                  const std::vector<json>& peer_rounds) {
  if (!w.contains("interleaved") || stream_rounds.empty()) return;
  json& i = w["interleaved"];
  const std::string best_peer = i.value("best_peer", "");
  std::vector<double> gbs;
  std::vector<const json*> triad, axon, best;
  json triad_bursts = json::array(), axon_bursts = json::array();  // kept so the pairing can be checked
  for (size_t r = 0; r < stream_rounds.size(); ++r) {
    const json& t = stream_rounds[r];
    if (t.value("status", "") != "ok" || !t.contains("gbs")) {
      i["stream"] = {{"status", t.value("status", std::string("failed: no answer from peers.py"))}};
      return;
    }
    gbs.push_back(t["gbs"].get<double>());
    triad.push_back(&t);
    axon.push_back(kernel_rounds[r].contains("axon") ? &kernel_rounds[r]["axon"] : nullptr);
    best.push_back(peer_rounds[r].contains(best_peer) ? &peer_rounds[r][best_peer] : nullptr);
    triad_bursts.push_back(t.value("burst_ms", json::array()));
    axon_bursts.push_back(axon.back() ? axon.back()->value("burst_ms", json::array()) : json::array());
  }
  i["stream"] = {{"status", "ok"},
                 {"elements", stream_rounds[0].value("elements", 0)},
                 {"bytes_per_call", stream_rounds[0].value("bytes_per_call", 0.0)},
                 {"gbs", median(gbs)},
                 {"round_gbs", gbs},
                 {"round_burst_ms", triad_bursts}};
  i["axon_round_burst_ms"] = axon_bursts;
  double bytes = w.value("bytes", 0.0);
  i["axon_stream_fraction"] = paired_stream_fraction(bytes, axon, triad);
  i["best_peer_stream_fraction"] = paired_stream_fraction(bytes, best, triad);
}

// One workload: optimize, time both kernels cold, run the peers. `w` holds
// whatever was finished when an interrupt arrives (its "interrupted" set).
json bench_workload(const Context& cx, const std::string& spec_path) {
  auto t0 = std::chrono::steady_clock::now();
  std::string name = fs::path(spec_path).stem().string();
  json w = {{"name", name}, {"spec", spec_path}};
  frontend::Spec spec = frontend::load_spec(spec_path, cx.opts.spec_options);
  ir::Graph g = transforms::run_pipeline(std::move(spec.graph));
  w["entry"] = g.entry;
  analysis::Cost cost = analysis::graph_cost(g);
  w["flops"] = cost.flops;
  w["bytes"] = cost.bytes;
  w["bytes_written"] = cost.bytes_written;

  if (!cx.opts.searched) say(cx, name + ": optimizing (budget " + std::to_string(static_cast<int>(cx.opts.budget_s)) + " s)");
  optimize::OptimizeOptions oo;
  oo.target = cx.target;
  oo.budget_s = cx.opts.budget_s;
  oo.db_path = cx.opts.db_path;
  oo.use_db = cx.opts.use_db;
  oo.interrupt = cx.opts.interrupt;
  auto summary = [](const optimize::OptimizeResult& r) {
    json applied = json::array();
    if (r.report.contains("rewrites"))
      for (const json& a : r.report["rewrites"].value("applied", json::array())) applied.push_back(a.value("rule", ""));
    return json{{"variant", r.report.value("variant", "")}, {"from_db", r.from_db},
                {"stop_reason", r.stop_reason},              {"search_axon_ms", r.axon_ms},
                {"search_naive_ms", r.naive_ms},             {"schedule", r.report.value("schedule", json())},
                {"rewrites_applied", applied},               {"warnings", r.warnings}};
  };
  optimize::OptimizeResult r = cx.opts.searched ? *cx.opts.searched : optimize::optimize(g, oo);
  bool axon_is_naive = r.report.value("variant", "") == "naive";
  w["optimize"] = summary(r);
  if (interrupted(cx)) return stopped(std::move(w));
  if (!r.found) {  // no kernel passed its check: the row says so, the next workload runs
    w["error"] = r.failure;
    return w;
  }

  std::optional<optimize::OptimizeResult> plain;  // the winner without rewrites (ablation)
  if (cx.opts.ablate_rewrites) {
    say(cx, name + ": optimizing without rewrites (budget " + std::to_string(static_cast<int>(cx.opts.budget_s)) +
                " s)");
    oo.rewrites = false;
    plain = optimize::optimize(g, oo);
    w["optimize_no_rewrites"] = summary(*plain);
    if (interrupted(cx)) return stopped(std::move(w));
    if (!plain->found) {
      w["optimize_no_rewrites"]["error"] = plain->failure;
      plain.reset();
    }
  }

  say(cx, name + (plain ? ": timing axon, axon without rewrites and naive, cold inputs"
                         : ": timing axon and naive, cold inputs"));
  std::unique_ptr<backend::Backend> be = backend::cpu_backend(cx.target);
  runtime::MeasureOptions mo;
  mo.flags = be->compile_flags(true);
  mo.check_inputs = 1;
  mo.min_seconds = cx.opts.min_seconds;
  mo.cold_bytes = cx.cold_bytes;
  runtime::Measurer m(g, mo);
  std::vector<codegen::KernelSource> ks = {r.kernel};
  if (plain) ks.push_back(plain->kernel);
  if (!axon_is_naive) ks.push_back(be->emit_naive(g));
  std::vector<runtime::Measurement> ms = m.measure(ks);
  w["axon"] = kernel_row(ms[0]);
  w["naive"] = kernel_row(ms.back());
  if (axon_is_naive) w["naive"]["same_kernel_as_axon"] = true;
  if (plain) {
    w["axon_no_rewrites"] = kernel_row(ms[1]);
    double with_ms = w["axon"].value("ms", 0.0), without_ms = w["axon_no_rewrites"].value("ms", 0.0);
    w["rewrites_speedup"] = with_ms > 0 && without_ms > 0 ? without_ms / with_ms : 0.0;
  }
  if (interrupted(cx)) return stopped(std::move(w));

  // A/B/A...: the peers, then axon's kernel again, `rounds` times, so that
  // a shift of the machine between them shows. With one round axon's
  // reported ms is the slower of its two medians (never the luckier one);
  // with more, every contender's reported ms is the median of its round
  // medians (axon has one more round, the first).
  const int rounds = std::max(1, cx.opts.rounds);
  std::string axon_lib;  // axon's kernel as a library, for peers.py's interleaved rounds
  if (!cx.opts.peers.empty() && cx.opts.interleave_rounds > 0 && w["axon"].value("status", "") == "ok") {
    runtime::CompileOptions co;
    co.flags = mo.flags;
    axon_lib = runtime::compile_shared(r.kernel, co);
  }
  std::vector<json> peer_rounds, kernel_rounds, stream_rounds;
  std::vector<double> axon_rounds = {w["axon"].value("ms", 0.0)};
  for (int k = 0; k < rounds && !cx.opts.peers.empty(); ++k) {
    say(cx, name + ": peers (" + join(cx.opts.peers, ", ") + ")" +
                (rounds > 1 ? ", round " + std::to_string(k + 1) + " of " + std::to_string(rounds) : ""));
    json answer = run_peers(cx, g, spec_path, m, name, axon_lib);
    peer_rounds.push_back(answer["peers"]);
    kernel_rounds.push_back(answer.value("kernels", json::object()));
    if (!cx.stream_lib.empty())
      stream_rounds.push_back(answer.value("stream", json{{"status", "failed: no answer from peers.py"}}));
    if (answer.contains("cpus")) w["peers_cpus"] = answer["cpus"];  // what peers.py could run on
    if (interrupted(cx)) break;
    if (w["axon"].value("status", "") != "ok") continue;
    say(cx, name + ": timing axon again, after the peers");
    runtime::Measurement again = m.measure({r.kernel})[0];
    if (!again.verified) {
      w["axon"]["after_peers_status"] = "failed: " + again.error;
      break;
    }
    axon_rounds.push_back(again.ms);
  }
  w["peers"] = combine_peer_rounds(peer_rounds);
  if (!axon_lib.empty() && !peer_rounds.empty()) {
    for (auto& [p, row] : w["peers"].items()) {
      std::vector<const json*> per_round;
      for (const json& r : peer_rounds) per_round.push_back(r.contains(p) ? &r[p] : nullptr);
      combine_interleaved(row, per_round);
    }
    std::vector<const json*> per_round;
    for (const json& r : kernel_rounds) per_round.push_back(r.contains("axon") ? &r["axon"] : nullptr);
    json in_process = kernel_rounds.back().value("axon", json{{"status", "failed: no answer from peers.py"}});
    json ax = {{"status", in_process.value("status", "")}};
    combine_interleaved(ax, per_round);
    w["axon"]["in_peers_process"] = ax;
  }
  if (interrupted(cx)) return stopped(std::move(w));
  if (axon_rounds.size() > 1) {
    json& a = w["axon"];
    a["ms_before_peers"] = axon_rounds.front();
    a["ms_after_peers"] = axon_rounds.back();
    if (rounds == 1) {
      a["ms"] = std::max(axon_rounds.front(), axon_rounds.back());
    } else {
      a["round_ms"] = axon_rounds;
      a["ms"] = median(axon_rounds);
    }
  }

  auto [best, best_ms] = fastest_peer(w["peers"], "median_ms");
  double axon_ms = w["axon"].value("ms", 0.0);
  w["best_peer"] = best;
  w["speedup_vs_best_peer"] = !best.empty() && axon_ms > 0 ? best_ms / axon_ms : 0.0;
  // The same comparison from the interleaved bursts: every contender timed in
  // the same seconds of one process.
  if (w["axon"].contains("in_peers_process") && w["axon"]["in_peers_process"].contains("interleaved_ms")) {
    double a_ms = w["axon"]["in_peers_process"]["interleaved_ms"].get<double>();
    auto [ibest, ibest_ms] = fastest_peer(w["peers"], "interleaved_ms");
    if (!ibest.empty() && a_ms > 0)
      w["interleaved"] = {{"axon_ms", a_ms},
                          {"best_peer", ibest},
                          {"best_peer_ms", ibest_ms},
                          {"speedup_vs_best_peer", ibest_ms / a_ms}};
    if (stream_rounds.size() == peer_rounds.size()) apply_stream(w, stream_rounds, kernel_rounds, peer_rounds);
  }
  apply_roofline(w, cx.target.peaks);
  w["seconds"] = seconds_since(t0);
  return w;
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p);
  f << text;
  if (!f) throw Diagnostic(SourceLoc{p.string(), 0, 0}, "cannot write " + p.string());
}

void write_tables(const json& b, const fs::path& out) {
  write_text(out / "bench.json", b.dump(2) + "\n");
  write_text(out / "bench.csv", bench_csv(b));
  write_text(out / "bench.md", bench_markdown(b));
}

json plot(const Context& cx) {
  if (cx.harness.empty()) return {{"status", "not written: bench/harness/plot.py not found"}};
  fs::path log = cx.out / "logs" / "plot.log";
  int rc = run_logged({cx.opts.python, (cx.harness / "plot.py").string(), (cx.out / "bench.json").string(),
                       (cx.out / "bench.png").string()},
                      log);
  if (rc == 0) return {{"status", "ok"}, {"file", "bench.png"}};
  if (rc == 3) return {{"status", "not written: matplotlib is not installed (bench/setup_peers.sh installs it)"}};
  std::string tail = last_line(log);
  return {{"status", "not written: plot.py exited " + std::to_string(rc) + (tail.empty() ? "" : ": " + tail)}};
}

std::string one_line(const std::string& s) {
  std::string r = s.substr(0, s.find('\n'));
  return r.size() > 300 ? r.substr(0, 300) : r;
}

std::string summary_line(const json& w) {
  if (w.contains("error")) return w["name"].get<std::string>() + ": error: " + w["error"].get<std::string>();
  char buf[256];
  const json& a = w["axon"];
  std::snprintf(buf, sizeof buf, "%s: axon %.4g ms (%.2f of roofline, %.2f of stream), naive %.4g ms",
                w["name"].get<std::string>().c_str(), a.value("ms", 0.0),
                a.contains("fraction") ? a["fraction"].value("roofline", 0.0) : 0.0,
                a.contains("fraction") ? a["fraction"].value("bandwidth", 0.0) : 0.0, w["naive"].value("ms", 0.0));
  std::string s = buf;
  if (w.contains("axon_no_rewrites")) {
    std::snprintf(buf, sizeof buf, ", without rewrites %.4g ms (rewrites %.2fx)", w["axon_no_rewrites"].value("ms", 0.0),
                  w.value("rewrites_speedup", 0.0));
    s += buf;
  }
  for (const auto& [p, row] : w["peers"].items()) {
    if (row.value("status", "").rfind("not applicable", 0) == 0) continue;  // torch.sdpa beside a non-attention program
    s += ", " + p + " ";
    if (row.value("status", "") == "ok") {
      std::snprintf(buf, sizeof buf, "%.4g ms", row.value("median_ms", 0.0));
      s += buf;
    } else {
      s += row.value("status", std::string("?")).substr(0, 40);
    }
  }
  if (w.contains("interleaved")) {
    const json& i = w["interleaved"];
    std::snprintf(buf, sizeof buf, "; interleaved %.2fx vs %s", i.value("speedup_vs_best_peer", 0.0),
                  i.value("best_peer", "").c_str());
    s += buf;
    if (i.contains("stream") && i["stream"].value("status", "") == "ok") {
      std::snprintf(buf, sizeof buf, ", %.2f of the triad's %.1f GB/s", i.value("axon_stream_fraction", 0.0),
                    i["stream"].value("gbs", 0.0));
      s += buf;
    }
  }
  return s;
}

// bench_workload, its failures as the row's error. A Diagnostic (the spec
// is wrong) and an internal error each keep the row.
json workload_row(const Context& cx, const std::string& spec) {
  const std::string name = fs::path(spec).stem().string();
  try {
    return bench_workload(cx, spec);
  } catch (const Diagnostic& d) {
    std::ifstream f(d.loc().file);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    return {{"name", name}, {"spec", spec}, {"error", one_line(d.render(text))}};
  } catch (const std::exception& e) {
    return {{"name", name}, {"spec", spec}, {"error", one_line(std::string("internal error: ") + e.what())}};
  }
}

// workload_row in a child process (support/in_child.h): a workload whose
// search or kernel crashes costs its own row, which says how its process
// ended, and the bench goes on with the next. The parent runs no OpenMP
// region (the peaks probe uses plain threads), so the child may.
json isolated_workload(const Context& cx, const std::string& spec) {
  const std::string name = fs::path(spec).stem().string();
  support::ChildResult r = support::in_child([&] { return workload_row(cx, spec).dump(); });
  if (r.ok) {
    try {
      return json::parse(r.value);
    } catch (const std::exception& e) {
      r.how = "exit 0 with an unreadable row (" + one_line(e.what()) + ")";
    }
  }
  if (r.how.rfind("could not fork", 0) == 0) {
    say(cx, name + ": " + r.how + "; measured in this process");
    return workload_row(cx, spec);
  }
  std::string why = "internal error: the workload's process ended with " + r.how;
  if (!r.value.empty()) why += ": " + r.value;
  return {{"name", name}, {"spec", spec}, {"error", one_line(why + "; the bench went on")}};
}

}  // namespace

std::vector<std::string> default_specs() {
  for (const fs::path& root : search_roots()) {
    fs::path dir = root / "bench" / "workloads";
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<std::string> specs;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".py") specs.push_back(e.path().string());
    std::sort(specs.begin(), specs.end());
    if (!specs.empty()) return specs;
  }
  return {};
}

std::string find_harness_dir() {
  std::error_code ec;
  if (const char* s = std::getenv("AXON_BENCH_HARNESS"); s && *s)
    return fs::exists(fs::path(s) / "peers.py", ec) ? fs::path(s).string() : "";
  for (const fs::path& root : search_roots())
    if (fs::exists(root / "bench" / "harness" / "peers.py", ec)) return (root / "bench" / "harness").string();
  return "";
}

// Run when the workload is measured and again when the run ends with better
// peaks (run_bench); the contract is in bench.h.
void apply_roofline(json& w, const target::Peaks& p) {
  analysis::Cost cost;
  cost.flops = w.value("flops", 0.0);
  cost.bytes = w.value("bytes", 0.0);
  const double ceiling = target::bandwidth_ceiling_gbs(p);
  double mix_gbs = 0;
  if (w.contains("bytes_written") && cost.bytes > 0) {
    const double share = w["bytes_written"].get<double>() / cost.bytes;
    const target::MixCeiling m = target::bandwidth_ceiling_of_mix(p, share);
    mix_gbs = m.gbs;
    w["mix_ceiling"] = {{"write_share", share}, {"loop", m.loop}, {"loop_write_share", m.loop_write_share}, {"gbs", m.gbs}};
  }
  double floor_ms = analysis::roofline_floor_ms(cost, p.fma_gflops_all, ceiling);
  bool memory_bound = ceiling > 0 && p.fma_gflops_all > 0 && cost.bytes / ceiling >= cost.flops / p.fma_gflops_all;
  w["floor_ms"] = floor_ms;
  w["bound"] = memory_bound ? "memory" : "compute";
  for (const char* k : {"axon", "naive", "axon_no_rewrites"})
    if (w.contains(k) && w[k].value("ms", 0.0) > 0) w[k]["fraction"] = fractions(w[k]["ms"].get<double>(), cost, floor_ms, p, mix_gbs);
  if (w.contains("peers"))
    for (auto& [name, row] : w["peers"].items())
      if (row.value("status", "") == "ok" && row.value("median_ms", 0.0) > 0)
        row["fraction"] = fractions(row["median_ms"].get<double>(), cost, floor_ms, p, mix_gbs);
  if (w.contains("interleaved"))
    w["interleaved"]["axon_fraction"] = fractions(w["interleaved"].value("axon_ms", 0.0), cost, floor_ms, p, mix_gbs);
  // Anything timed above the ceiling (axon's kernels and the peers alike).
  json anomalies = json::array();
  auto check = [&](const std::string& who, const json& row) {
    double f = row.contains("fraction") ? row["fraction"].value("bandwidth", 0.0) : 0.0;
    if (f > kAnomalousBandwidthFraction) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "%s at %.2f of the bandwidth ceiling (%.1f GB/s): above %.2f, so its bytes or its "
                    "time are not what they seem", who.c_str(), f, ceiling, kAnomalousBandwidthFraction);
      anomalies.push_back(buf);
    }
  };
  for (const char* k : {"axon", "naive", "axon_no_rewrites"})
    if (w.contains(k)) check(k, w[k]);
  if (w.contains("peers"))
    for (const auto& [name, row] : w["peers"].items()) check(name, row);
  if (anomalies.empty()) w.erase("anomalies");
  else w["anomalies"] = anomalies;
}

json run_bench(const BenchOptions& opts) {
  if (opts.searched && opts.specs.size() != 1) throw InternalError("bench: a searched result is for one spec");
  Context cx{opts, target::resolve_target(opts.target_file, false, false), 0, fs::path(opts.out_dir), fs::path(), ""};
  std::error_code ec;
  fs::create_directories(cx.out / "logs", ec);
  if (ec || !fs::is_directory(cx.out))
    throw Diagnostic(SourceLoc{opts.out_dir, 0, 0},
                     "cannot create the output directory " + opts.out_dir + (ec ? ": " + ec.message() : ""));
  write_text(cx.out / "bench.json", "{}\n");  // fail on an unwritable -o before anything is measured
  cx.harness = opts.harness_dir.empty() ? find_harness_dir() : opts.harness_dir;

  // Before the probe can load OpenMP: the kernels are timed with pinned threads.
  runtime::pin_openmp_threads();
  say(cx, "probe: measuring the FMA peak and the streaming bandwidth");
  target::measure_peaks(cx.target);
  double llc = target::last_level_cache_bytes(cx.target);
  cx.cold_bytes = target::cold_rotation_bytes(cx.target);
  const target::Peaks& pk = cx.target.peaks;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "probe: %.1f GFLOP/s FMA, %.1f GB/s stream (all %d cores), bandwidth ceiling %.1f GB/s; cold inputs "
                "rotate >= %.0f MiB",
                pk.fma_gflops_all, pk.stream_gbs_all, cx.target.cores, target::bandwidth_ceiling_gbs(pk),
                cx.cold_bytes / (1024 * 1024));
  say(cx, buf);

  // The triad, timed between the contenders in every interleaved round.
  json stream_kernel = {{"status", "not built: no interleaved rounds"}};
  if (!opts.peers.empty() && opts.interleave_rounds > 0) {
    try {
      runtime::CompileOptions co;
      co.flags = backend::cpu_backend(cx.target)->compile_flags(true);
      cx.stream_lib = runtime::compile_shared(codegen::stream_triad_kernel(cx.target), co);
      stream_kernel = {{"status", "ok"}, {"elements", target::stream_triad_elements(cx.target)}};
    } catch (const std::exception& e) {
      stream_kernel = {{"status", "failed: " + one_line(e.what())}};
      say(cx, "stream triad kernel: " + stream_kernel["status"].get<std::string>());
    }
  }

  json b;
  b["command"] = opts.command;
  b["date"] = utc_now();
  b["target"] = target::to_json(cx.target);
  b["probe"] = peaks_json(pk);
  b["last_level_cache_bytes"] = llc;
  b["cold_bytes"] = cx.cold_bytes;
  b["budget_s"] = opts.budget_s;
  b["min_seconds"] = opts.min_seconds;
  b["rounds"] = std::max(1, opts.rounds);
  b["interleave_rounds"] = opts.interleave_rounds;
  b["burst_seconds"] = opts.burst_seconds;
  b["burst_gap_s"] = opts.burst_gap_s;
  b["stream_kernel"] = stream_kernel;
  b["use_db"] = opts.use_db;
  b["ablate_rewrites"] = opts.ablate_rewrites;
  b["peers"] = opts.peers;
  b["harness_dir"] = cx.harness.string();
  b["workloads"] = json::array();
  b["plot"] = {{"status", "not written yet"}};
  b["finished"] = false;

  size_t done = 0;
  for (const std::string& spec : opts.specs) {
    if (interrupted(cx)) break;
    std::string name = fs::path(spec).stem().string();
    std::snprintf(buf, sizeof buf, "[%zu/%zu] %s", done + 1, opts.specs.size(), name.c_str());
    say(cx, buf);
    json w = isolated_workload(cx, spec);
    if (w.value("interrupted", false)) break;  // unfinished: not reported as if it were measured
    b["workloads"].push_back(w);
    ++done;
    write_tables(b, cx.out);
    say(cx, summary_line(w));
  }
  // The probe again: a peak is what the machine can do, and one probe can
  // land on a slow moment of a shared machine (a stream rate on both cores
  // below one core's was seen), which would flatter every fraction. The
  // best of the two is the one the fractions use.
  if (done > 0 && !interrupted(cx)) {
    say(cx, "probe: again, at the end of the run");
    target::Target end = cx.target;
    end.peaks = target::Peaks{};
    target::measure_peaks(end);
    target::Peaks best = better_peaks(cx.target.peaks, end.peaks);
    b["probe_start"] = b["probe"];
    b["probe_end"] = peaks_json(end.peaks);
    b["probe"] = peaks_json(best);
    for (json& w : b["workloads"])
      if (!w.contains("error")) apply_roofline(w, best);
  }
  b["finished"] = done == opts.specs.size();
  if (!b["finished"].get<bool>()) {
    b["interrupted"] = true;
    for (size_t i = done; i < opts.specs.size(); ++i) b["not_run"].push_back(opts.specs[i]);
  }
  write_tables(b, cx.out);  // plot.py reads bench.json
  b["plot"] = plot(cx);
  write_tables(b, cx.out);
  std::error_code rm;
  fs::remove_all(cx.out / "work", rm);
  return b;
}

}  // namespace axon::bench
