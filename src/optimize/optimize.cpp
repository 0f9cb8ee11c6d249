// optimize: wires the rewrite exploration (rewrite/), the autotuner
// (search/), the CPU code generator, the measurement harness
// (runtime/measure) and the tuning database (tuning/).
// The contract is in optimize.h; the report format in docs/optimize.md.
#include "optimize/optimize.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <iterator>
#include <random>
#include <set>
#include <sstream>

#include "analysis/cost.h"
#include "backend/backend.h"
#include "ir/verify.h"
#include "optimize/kernel_report.h"
#include "optimize/timing_anchor.h"
#include "optimize/worst_element.h"
#include "rewrite/rewrite.h"
#include "runtime/compile_shared.h"
#include "runtime/measure.h"
#include "search/autotune.h"
#include "support/diagnostic.h"
#include "tuning/tuning_db.h"

namespace axon::optimize {

using json = nlohmann::json;

namespace {

// The first line of an exception's text: a warning stays one line.
std::string first_line(const std::string& s) {
  size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

std::string hex16(uint64_t h) {
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(h));
  return hash;
}

std::string graph_key(const ir::Graph& g) {
  std::string k = hex16(g.structural_hash()) + " " + g.entry + "(";
  for (size_t i = 0; i < g.params.size(); ++i) {
    if (i) k += ",";
    k += ir::type_str(g.params[i].type);
  }
  k += ")->(";
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    if (i) k += ",";
    k += ir::type_str(g[g.outputs[i]].type);
  }
  return k + ")";
}

json roofline_json(const ir::Graph& g, const target::Target& t, double axon_ms) {
  analysis::Cost c = analysis::graph_cost(g);
  double floor_ms = analysis::roofline_floor_ms(c, t.peaks.fma_gflops_all, target::bandwidth_ceiling_gbs(t.peaks));
  json r = {{"flops", c.flops}, {"bytes", c.bytes}, {"floor_ms", floor_ms}};
  double fraction = floor_ms > 0 && axon_ms > 0 ? floor_ms / axon_ms : 0;
  r["fraction"] = fraction;
  // Above 1 means the kernel beat the measured peaks: a peak measured low or
  // a kernel that skips work; either way worth a look.
  r["fraction_above_one"] = fraction > 1;
  return r;
}

// The seconds one float64 interpreter run of `g` and its error bounds takes
// (the database answer's re-check), from its FLOP counts: about 0.5 ns per
// contraction FLOP and 100 ns per element of any other op. Measured as the
// whole re-checked database answer, which the interpreter dominates: 1024^3
// matmul, 2.1e9 contraction FLOPs, 0.96 s; on an AVX2 host (Zen 2), s5's
// GELU, 7.6e7 elementwise, 8.4 s; s2's softmax, 2.1e7, 2.2 s; s4's RMSNorm,
// 1.7e7, 1.5 s.
double interpreter_seconds(const analysis::Cost& c) {
  return 0.5e-9 * c.contraction_flops + 100e-9 * (c.flops - c.contraction_flops);
}

// The test seam of docs/optimize.md: when this environment variable names a
// file, its text is the naive kernel's source in the search (the header stays
// the generated one), and so the source of every schedule that emits the
// naive kernel. It lets a test give the search a baseline that misses its
// error budget, with real numbers, whatever the naive code generator does.
constexpr const char* kNaiveKernelOverride = "AXON_TEST_NAIVE_KERNEL";
// Test seam: when set (to anything), every graph's schedule space is empty,
// so that the naive kernel is the only kernel the search has.
constexpr const char* kNaiveOnly = "AXON_TEST_NAIVE_ONLY";

std::optional<std::string> naive_kernel_override() {
  const char* p = std::getenv(kNaiveKernelOverride);
  if (!p || !*p) return std::nullopt;
  return std::string(p);
}

std::string read_override(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Diagnostic(SourceLoc{path, 0, 0}, std::string("cannot read the file named by ") + kNaiveKernelOverride);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Longest re-check a database answer makes: it must answer within a second.
constexpr double kRecheckSeconds = 0.5;

// Inputs and outputs together past this are timed cold during the search
// (the measurer keeps smaller sets in four copies that stay in cache).
constexpr double kColdAboveBytes = 8.0 * 1024 * 1024;

// Empty when `v` has the C ABI of `g` (entry, parameter names and types,
// output types): a kernel of `v` can then be called, and checked, as one of `g`.
std::string abi_mismatch(const ir::Graph& g, const ir::Graph& v) {
  if (v.entry != g.entry) return "entry " + v.entry + " is not " + g.entry;
  if (v.params.size() != g.params.size()) return "a different number of parameters";
  for (size_t i = 0; i < g.params.size(); ++i)
    if (v.params[i].name != g.params[i].name || !(v.params[i].type == g.params[i].type))
      return "parameter " + std::to_string(i) + " differs";
  if (v.outputs.size() != g.outputs.size()) return "a different number of outputs";
  for (size_t i = 0; i < g.outputs.size(); ++i)
    if (!(v[v.outputs[i]].type == g[g.outputs[i]].type)) return "output " + std::to_string(i) + " has another type";
  return "";
}

json cost_json(const rewrite::Cost& c) { return {{"flops", c.flops}, {"bytes", c.bytes}}; }

json move_json(const rewrite::Move& m) {
  return {{"kind", m.kind},       {"detail", m.detail},         {"site", m.site},
          {"variant", m.variant}, {"split_size", m.split_size}, {"tile", m.tile},
          {"rule_lhs", m.rule_lhs}, {"rule_rhs", m.rule_rhs}, {"order", m.order}};
}

rewrite::Move move_from_json(const json& j) {
  rewrite::Move m;
  m.kind = j.at("kind").get<std::string>();
  m.detail = j.value("detail", std::string());
  m.site = j.at("site").get<std::vector<ir::NodeId>>();
  m.variant = j.value("variant", 0);
  m.split_size = j.value("split_size", int64_t{0});
  m.tile = j.value("tile", int64_t{0});
  m.rule_lhs = j.value("rule_lhs", std::string());
  m.rule_rhs = j.value("rule_rhs", std::string());
  m.order = j.value("order", std::vector<int>());
  return m;
}

// The rule's name: the move's kind, and for a library rule its name in the library.
std::string rule_name(const rewrite::Move& m) {
  if (m.kind != "library-rule") return m.kind;
  size_t colon = m.detail.find(':');
  return colon == std::string::npos ? m.kind : m.kind + ":" + m.detail.substr(0, colon);
}

// Replays `moves` from compact(g), as explore() found them; nullopt when a
// step no longer applies.
std::optional<ir::Graph> replay(const ir::Graph& g, const std::vector<rewrite::Move>& moves,
                                std::vector<rewrite::Cost>* costs = nullptr) {
  ir::Graph cur = ir::compact(g);
  if (costs) costs->push_back(rewrite::cost(cur));
  for (const rewrite::Move& m : moves) {
    std::optional<ir::Graph> next = rewrite::apply_move(cur, m);
    if (!next) return std::nullopt;
    cur = std::move(*next);
    if (costs) costs->push_back(rewrite::cost(cur));
  }
  return cur;
}

// One graph whose schedule space is searched: the original or a proved variant.
struct Variant {
  ir::Graph graph;
  std::vector<rewrite::AppliedRewrite> steps;  // empty: the original
  rewrite::Cost cost;
  schedule::Space space;
  double predicted_s = 0;   // best predicted seconds of the sampled legal points; 0: none / empty space
  std::string why_not;      // why it is not searched ("" when it is)
  // The search's outcome.
  bool searched = false;
  search::SearchResult sr;
  int prior = 0;
  double budget_s = 0;
  int trials = 0;
};

Variant make_variant(ir::Graph g, std::vector<rewrite::AppliedRewrite> steps, const rewrite::Cost& c,
                     schedule::Space sp) {
  Variant v;
  v.graph = std::move(g);
  v.steps = std::move(steps);
  v.cost = c;
  v.space = std::move(sp);
  return v;
}

// The cost model's best guess for `g`: the least predicted time over the
// default point and a few random points of its space (0 when none is legal).
double best_predicted(const ir::Graph& g, const schedule::Space& sp, const backend::Backend& be, uint64_t seed) {
  if (sp.knobs.empty()) return 0;
  std::mt19937_64 rng(seed);
  double best = 0;
  auto consider = [&](const schedule::Schedule& s) {
    if (!be.why_illegal(g, s).empty()) return;
    double p = be.predicted_seconds(g, s);
    if (p > 0 && (best == 0 || p < best)) best = p;
  };
  consider(schedule::default_schedule(sp));
  for (int i = 0; i < 48; ++i) {
    schedule::Schedule s;
    for (const auto& k : sp.knobs) s[k.name] = k.values[rng() % k.values.size()];
    consider(s);
  }
  return best;
}

std::string fmt_ms(double s) {
  char b[48];
  std::snprintf(b, sizeof b, "%.4g ms", s * 1e3);
  return b;
}

// The offset of offset_screen's inputs (the gate's large_mean set).
constexpr double kScreenOffset = 1000;

// A variant predicted at most this much slower than the original is still
// searched: the schedule cost model ranks, it does not decide (it often
// predicts two layouts of the same work alike).
constexpr double kPredictedSlack = 1.1;

// Picks the variants worth a share of the search (indices into `vs`, in
// the order they are searched; the original, vs[0], is always among them). A variant is worth it when the cost model
// predicts a kernel no slower than kPredictedSlack x the original's, or when the original has no
// schedule space (only the naive kernel) and the variant has one; with no
// space on either side, when the variant is cheaper by the rewrite cost
// model (a cheaper naive kernel). Ranked by predicted time, then by cost.
std::vector<size_t> choose(std::vector<Variant>& vs, const ir::Graph& g, int most) {
  std::vector<size_t> ok;
  const Variant& o = vs[0];
  for (size_t i = 1; i < vs.size(); ++i) {
    Variant& v = vs[i];
    if (std::string why = abi_mismatch(g, v.graph); !why.empty()) {
      v.why_not = "different signature: " + why;
      continue;
    }
    if (v.predicted_s > 0) {
      if (o.predicted_s > 0 && v.predicted_s > kPredictedSlack * o.predicted_s)
      {
        v.why_not = "predicted ";
        v.why_not += fmt_ms(v.predicted_s);
        v.why_not += ", above 1.1 x the original's ";
        v.why_not += fmt_ms(o.predicted_s);
      }
      else
        ok.push_back(i);
    } else if (o.predicted_s > 0) {
      v.why_not = "no legal schedule, and the original has one";
    } else if (rewrite::cost_score(v.cost) < rewrite::cost_score(o.cost)) {
      ok.push_back(i);
    } else {
      v.why_not = "no schedule space and no cheaper than the original";
    }
  }
  std::stable_sort(ok.begin(), ok.end(), [&](size_t a, size_t b) {
    const Variant &x = vs[a], &y = vs[b];
    bool xs = x.predicted_s > 0, ys = y.predicted_s > 0;
    if (xs != ys) return xs;
    if (xs && x.predicted_s != y.predicted_s) return x.predicted_s < y.predicted_s;
    double cx = rewrite::cost_score(x.cost), cy = rewrite::cost_score(y.cost);
    if (cx != cy) return cx < cy;
    return x.graph.structural_hash() < y.graph.structural_hash();
  });
  for (size_t k = static_cast<size_t>(std::max(0, most)); k < ok.size(); ++k)
    vs[ok[k]].why_not = "not among the " + std::to_string(most) + " best predicted";
  if (static_cast<int>(ok.size()) > most) ok.resize(static_cast<size_t>(std::max(0, most)));
  // The original goes behind the variants predicted faster than it, so that
  // a search that overruns its share takes time from the less promising
  // graphs (the original is searched even when the budget is spent).
  auto before_original = [&](size_t i) { return o.predicted_s > 0 && vs[i].predicted_s > 0 && vs[i].predicted_s < o.predicted_s; };
  ok.insert(std::find_if_not(ok.begin(), ok.end(), before_original), 0);
  return ok;
}

// A candidate of the final round: one of the fastest distinct kernels the
// searches measured, timed again beside the others.
struct Finalist {
  int variant = 0;
  schedule::Schedule schedule;
  double search_ms = 0, final_ms = 0;
  codegen::KernelSource kernel;
  bool by_model = false;  // seated by the cost model's rank, not by search time
};

// At most kFinalists finalists by search time, each within kFinalSlack of
// the fastest: a shared machine's noise moves single timings by tens of
// percent, so the search's order among close candidates is not to be
// trusted. And up to kModelFinalists more: the verified kernels the cost
// model ranks first, whatever their search time, because this machine's
// bandwidth also moves between two levels minutes apart (1.7x), and a
// kernel measured in the slow one never came within the slack (s7's
// non-temporal prefetch: 0.857 ms in a slow minute, beside 0.546 ms for
// its neighbour in a fast one).
constexpr size_t kFinalists = 4;
constexpr size_t kModelFinalists = 2;
constexpr double kFinalSlack = 1.3;

// The fastest verified, distinct kernels over every searched variant,
// fastest first, then the cost model's favourites not already among them.
std::vector<Finalist> finalists(const std::vector<Variant>& vs, const backend::Backend& be) {
  std::vector<Finalist> all;
  for (size_t i = 0; i < vs.size(); ++i) {
    if (!vs[i].searched) continue;
    for (const search::Trial& tr : vs[i].sr.history)
      if (tr.eval.ok) all.push_back({static_cast<int>(i), tr.schedule, tr.eval.ms, 0, {}});
  }
  std::stable_sort(all.begin(), all.end(), [](const Finalist& a, const Finalist& b) { return a.search_ms < b.search_ms; });
  std::vector<Finalist> out;
  std::set<std::string> sources;
  auto take = [&](Finalist f) {
    try {
      f.kernel = be.emit(vs[static_cast<size_t>(f.variant)].graph, f.schedule);
    } catch (const std::exception&) {
      return;
    }
    if (sources.insert(f.kernel.source + '\0' + f.kernel.header).second) out.push_back(std::move(f));
  };
  for (const Finalist& f : all) {
    if (out.size() >= kFinalists || f.search_ms > kFinalSlack * all.front().search_ms) break;
    take(f);
  }
  std::vector<std::pair<double, size_t>> ranked;
  for (size_t i = 0; i < all.size(); ++i)
    ranked.push_back({be.predicted_seconds(vs[static_cast<size_t>(all[i].variant)].graph, all[i].schedule), i});
  std::stable_sort(ranked.begin(), ranked.end());
  const size_t by_time = out.size();
  for (const auto& [sec, i] : ranked) {
    if (out.size() >= by_time + kModelFinalists) break;
    Finalist f = all[i];
    f.by_model = true;
    take(std::move(f));
  }
  return out;
}

json final_round_json(const std::vector<Finalist>& fs, int winner) {
  json j = {{"timed", fs.size()}, {"rule", "the fastest distinct kernels within 1.3x of the best search time, at most 4, "
                                            "and the 2 the cost model ranks first, timed again side by side in "
                                            "alternating rounds; the least median wins"},
            {"candidates", json::array()}};
  for (size_t i = 0; i < fs.size(); ++i)
    j["candidates"].push_back({{"variant", fs[i].variant}, {"schedule", schedule::to_json(fs[i].schedule)},
                               {"search_ms", fs[i].search_ms}, {"ms", fs[i].final_ms},
                               {"seat", fs[i].by_model ? "cost model" : "search time"},
                               {"winner", static_cast<int>(i) == winner}});
  return j;
}

std::string proof_status(const verify::smt::ProofResult& p) {
  std::string st = verify::smt::proof_status_name(p.status);
  for (char& ch : st) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return st;
}

// The report's "applied" list: each step of `v` with its proof and the cost
// before and after it (replayed from the original).
json applied_json(const ir::Graph& g, const Variant& v) {
  json a = json::array();
  std::vector<rewrite::Move> moves;
  for (const auto& s : v.steps) moves.push_back(s.move);
  std::vector<rewrite::Cost> costs;
  replay(g, moves, &costs);
  for (size_t i = 0; i < v.steps.size(); ++i) {
    const auto& s = v.steps[i];
    json j = {{"rule", rule_name(s.move)}, {"detail", s.move.detail},
              {"proof", {{"status", proof_status(s.proof)}, {"solver", "z3"}, {"solver_ms", s.proof.solver_ms},
                         {"queries", s.proof.queries}, {"over", "every size of the parameters' shape pattern, real inputs"}}},
              {"move", move_json(s.move)}};
    if (i + 1 < costs.size()) {
      j["before"] = cost_json(costs[i]);
      j["after"] = cost_json(costs[i + 1]);
    }
    a.push_back(j);
  }
  return a;
}

json steps_kinds(const Variant& v) {
  json k = json::array();
  for (const auto& s : v.steps) k.push_back(rule_name(s.move));
  return k;
}

// One run of optimize(): the state its steps share. optimize() below calls
// the steps in order; each says what it needs and what it leaves.
class Run {
 public:
  Run(const ir::Graph& g, const OptimizeOptions& opts)
      : g_(g), opts_(opts), t0_(std::chrono::steady_clock::now()), t_(opts.target) {}

  // The target's backend, the compile flags, the tuning keys and database,
  // the measuring options and the graph's schedule space.
  void prepare() {
    // Before anything (the peak probe included) can load OpenMP.
    runtime::pin_openmp_threads();
    be_ = backend::cpu_backend(t_);
    flags_ = be_->compile_flags(true);
    // Candidates of the original graph are stored under `key_`; those of a
    // variant under the key with the variant's hash appended. The report is
    // stored under `key_` when rewrites are on and under a key of its own
    // when off, so that --no-rewrites never answers with a rewritten kernel.
    key_ = tuning::TuningKey{graph_key(g_), t_.fingerprint(),
                             runtime::compiler_version(co_.cxx) + " codegen " + std::to_string(be_->version())};
    report_key_ = key_;
    if (!opts_.rewrites) report_key_.graph += " no-rewrites";
    if (opts_.use_db)
      db_ = std::make_unique<tuning::TuningDb>(opts_.db_path.empty() ? tuning::default_db_path() : opts_.db_path);
    mo_.flags = flags_;
    // A working set that cannot stay in cache between calls of a real
    // program is timed cold (copies rotated through the stream probe's
    // working set), as axon bench times it: warm timing would rank streaming
    // stores, which only pay past the caches, as losses.
    if (analysis::graph_cost(g_).bytes > kColdAboveBytes) mo_.cold_bytes = target::cold_rotation_bytes(t_);
    try {
      space_ = space_of(g_);
    } catch (const std::exception& e) {
      warn("the graph's schedule space could not be built (" + first_line(e.what()) +
           "); only the naive kernel and the rewritten variants are tried");
    }
  }

  // The stored answer, when the database has one for this graph and it
  // still verifies: the winner's graph rebuilt (the stored rule sequence
  // replayed on the original), its kernel emitted again and re-checked once
  // on one input of the ORIGINAL graph (no timing), so that a stale row
  // cannot hand out a wrong kernel. nullopt: search afresh.
  std::optional<OptimizeResult> answer_from_database() {
    if (!db_ || opts_.resume) return std::nullopt;
    auto stored = db_->report(report_key_);
    if (!stored) return std::nullopt;
    try {
      json report = json::parse(*stored);
      std::optional<ir::Graph> kg = g_;
      if (report.contains("rewrites") && report["rewrites"].contains("winner_steps") &&
          !report["rewrites"]["winner_steps"].empty()) {
        std::vector<rewrite::Move> moves;
        for (const json& mv : report["rewrites"]["winner_steps"]) moves.push_back(move_from_json(mv));
        kg = replay(g_, moves);
        if (kg && hex16(kg->structural_hash()) != report["rewrites"].value("winner_hash", std::string())) kg.reset();
        if (kg && !abi_mismatch(g_, *kg).empty()) kg.reset();
      }
      if (!kg) return std::nullopt;
      schedule::Schedule s = schedule::schedule_from_json(report.at("schedule"));
      bool naive = report.value("variant", "") == "naive";
      codegen::KernelSource k = naive ? be_->emit_naive(g_) : be_->emit(*kg, s);
      // The re-check costs one interpreter run; past kRecheckSeconds that
      // alone would break the promise of an answer within a second, so the
      // row (verified when stored, same target and compiler) is trusted.
      bool recheck = interpreter_seconds(analysis::graph_cost(g_)) <= kRecheckSeconds;
      bool verified = true;
      if (recheck) {
        runtime::MeasureOptions once = mo_;
        once.check_inputs = 1;
        runtime::Measurer m(g_, once);
        verified = m.check_only(k).verified;
      }
      // A stored winner that fails now falls through to a fresh search.
      if (!verified) return std::nullopt;
      res_.kernel = k;
      res_.schedule = s;
      res_.axon_ms = report["time_ms"].value("axon", 0.0);
      res_.naive_ms = report["time_ms"].value("naive", 0.0);
      res_.from_db = true;
      res_.stop_reason = "database";
      report["search"]["stop_reason"] = "database";
      report["search"]["seconds"] = elapsed();
      report["search"]["database"] = db_->path();
      report["verification"]["rechecked"] = recheck;
      res_.report = report;
      return res_;
    } catch (const std::exception& e) {
      warn("the stored answer could not be rebuilt (" + first_line(e.what()) + "); searching again");
      return std::nullopt;
    }
  }

  // The FMA and bandwidth peaks, when the target does not give them: they
  // only place the result against the roofline, so a failure is a warning.
  void measure_peaks() {
    if (t_.peaks.fma_gflops_all > 0 && t_.peaks.stream_gbs_all > 0) return;
    try {
      target::measure_peaks(t_);
    } catch (const std::exception& e) {
      warn("the hardware peaks could not be measured (" + first_line(e.what()) + "); the roofline reads 0");
    }
  }

  // The reference (its inputs and error bounds come from the original graph
  // only: every variant's kernel is judged by what the spec means) and the
  // naive kernel: the baseline and the fallback winner, when it passes its
  // own check. When it does not, it is only the baseline times compare with
  // (timed all the same), and the search must find a kernel that passes.
  void measure_baseline() {
    m_ = std::make_unique<runtime::Measurer>(g_, mo_);
    try {
      naive_k_ = be_->emit_naive(g_);
      naive_text_ = naive_k_.source + '\0' + naive_k_.header;
      naive_built_ = true;
    } catch (const std::exception& e) {
      naive_.error = "emit failed: " + first_line(e.what());
      warn("the naive kernel could not be generated (" + first_line(e.what()) +
           "); the search goes on without a baseline");
    }
    if (naive_built_) {
      if (std::optional<std::string> path = naive_kernel_override()) {
        naive_k_.source = read_override(*path);
        warn("the naive kernel's source is read from " + *path + " (" + kNaiveKernelOverride + ")");
      }
      naive_ = m_->measure({naive_k_}).at(0);
    }
    naive_ms_ = naive_.ms;
    if (naive_built_ && !naive_.verified && naive_.compiled) {
      naive_worst_ = worst_element(g_, *m_, naive_k_, flags_);
      naive_check_ = naive_worst_ ? to_json(*naive_worst_) : json{{"error", naive_.error}};
      warn("the naive kernel misses its error budget: " + (naive_worst_ ? describe(*naive_worst_) : naive_.error) +
           "; it cannot be the result, the search goes on for a kernel that passes");
      try {
        std::vector<runtime::Timing> tm = m_->time_side_by_side({naive_k_}, 2);
        if (!tm.empty() && tm[0].reps > 0) naive_ms_ = tm[0].median_ms;
      } catch (const std::exception&) {
        // Untimed: speedups against it read 0.
      }
    } else if (naive_built_ && !naive_.verified) {
      warn("the naive kernel could not be built (" + naive_.error + "); the search goes on without a baseline");
    }
    progress_.naive_ms = naive_ms_;
    report_progress();
    search_t0_ = elapsed();  // the budget counts from here (rewrites included)
  }

  // The proved variants of the graph (within a share of the budget), each
  // with its space and the cost model's guess, then the ones worth a search
  // (choose()); the original is vs_[0] and always among them.
  void explore_rewrites() {
    vs_.push_back(make_variant(g_, {}, rewrite::cost(g_), space_));
    try {
      vs_[0].predicted_s = best_predicted(g_, space_, *be_, opts_.seed);
    } catch (const std::exception& e) {
      warn("the cost model failed on the graph (" + first_line(e.what()) + "); its points are ranked as unknown");
    }
    rw_ = {{"enabled", opts_.rewrites}, {"explored", 0}, {"proofs", 0}, {"refused", 0}, {"seconds", 0.0},
           {"stop_reason", opts_.rewrites ? "" : "disabled"}, {"searched", json::array()},
           {"not_searched", json::array()}, {"applied", json::array()}};
    if (opts_.rewrites && !interrupted()) {
      double explore_t0 = elapsed();
      rewrite::ExploreOptions eo;
      // A small share of the budget: at most 5 s, a tenth of it, at least 0.5 s.
      eo.max_seconds = std::clamp(0.1 * opts_.budget_s, 0.5, 5.0);
      eo.max_variants = 24;
      eo.k = eo.max_variants;  // every variant: the schedule cost model ranks them below
      eo.prove.timeout_ms = 1000;
      eo.prove.budget_ms = static_cast<unsigned>(std::max(500.0, eo.max_seconds * 1000));
      std::string lib = rewrite::default_library_path();
      if (!lib.empty()) eo.library = rewrite::load_library(lib);
      rewrite::ExploreResult ex;
      try {
        ex = rewrite::explore(g_, eo);
      } catch (const std::exception& e) {
        warn("the rewrite exploration failed (" + first_line(e.what()) + "); only the original graph is searched");
        ex = {};
        ex.stop = rewrite::StopReason::Saturated;
      }
      for (rewrite::RewrittenGraph& rg : ex.best) {
        if (rg.steps.empty()) continue;  // the original (compacted)
        std::string label = rule_name(rg.steps.back().move) + " (" + std::to_string(rg.steps.size()) + " step" +
                            (rg.steps.size() == 1 ? "" : "s") + ")";
        try {
          Variant v = make_variant(std::move(rg.graph), std::move(rg.steps), rg.cost, {});
          v.space = space_of(v.graph);
          v.predicted_s = best_predicted(v.graph, v.space, *be_, opts_.seed);
          vs_.push_back(std::move(v));
        } catch (const std::exception& e) {
          warn("the rewritten variant ending in " + label + " could not be planned (" + first_line(e.what()) +
               "); skipped");
        }
      }
      int refused = 0;
      for (const auto& c : ex.tried) refused += c.proof.status == verify::smt::ProofStatus::Proved ? 0 : 1;
      rw_["explored"] = ex.variants;
      rw_["proofs"] = ex.proofs;
      rw_["refused"] = refused;
      rw_["iterations"] = ex.iterations;
      rw_["stop_reason"] = rewrite::stop_reason_name(ex.stop);
      rw_["seconds"] = elapsed() - explore_t0;
      rw_["library_rules"] = eo.library.size();
    }
    chosen_ = choose(vs_, g_, opts_.rewrites ? opts_.rewrite_variants : 0);
  }

  // The schedule search of each chosen variant in turn, with an even share
  // of the budget and trials left; every candidate checked against the
  // original graph's reference before it is timed.
  void search_variants() {
    max_err_ = naive_.verified ? naive_.max_error_over_budget : 0.0;
    if (naive_built_) by_source_[naive_text_] = naive_;
    for (size_t ci = 0; ci < chosen_.size(); ++ci) search_variant(ci);
  }

  // The fastest verified kernels of every variant (and the cost model's
  // favourites) timed side by side; the fastest there wins.
  void final_round() {
    for (size_t i = 0; i < vs_.size(); ++i)
      if (vs_[i].searched && vs_[i].sr.found && (win_ < 0 || vs_[i].sr.best.eval.ms < vs_[win_].sr.best.eval.ms))
        win_ = static_cast<int>(i);
    if (win_ >= 0) win_schedule_ = vs_[win_].sr.best.schedule, win_ms_ = vs_[win_].sr.best.eval.ms;
    final_round_ = final_round_json({}, 0);
    if (win_ < 0 || interrupted()) return;
    std::vector<Finalist> fs;
    try {
      fs = finalists(vs_, *be_);
    } catch (const std::exception& e) {
      warn("the final round could not be set up (" + first_line(e.what()) + "); the search's fastest wins");
    }
    if (fs.size() < 2) return;
    std::vector<codegen::KernelSource> ks;
    for (const Finalist& f : fs) ks.push_back(f.kernel);
    std::vector<runtime::Timing> tm = m_->time_side_by_side(ks);
    for (size_t i = 0; i < fs.size(); ++i) fs[i].final_ms = tm[i].reps > 0 ? tm[i].median_ms : 0;
    int best = -1;
    for (size_t i = 0; i < fs.size(); ++i)
      if (fs[i].final_ms > 0 && (best < 0 || fs[i].final_ms < fs[static_cast<size_t>(best)].final_ms))
        best = static_cast<int>(i);
    if (best >= 0) {
      const Finalist& f = fs[static_cast<size_t>(best)];
      win_ = f.variant, win_schedule_ = f.schedule, win_ms_ = f.final_ms;
    }
    final_round_ = final_round_json(fs, best);
  }

  // The result: the winner's kernel, or the naive kernel when it passed and
  // nothing beat it.
  void choose_result() {
    if (win_ >= 0) {
      try {
        win_kernel_ = be_->emit(vs_[win_].graph, win_schedule_);
      } catch (const std::exception& e) {  // it emitted during the search: not expected
        warn("the winning schedule could not be emitted again (" + first_line(e.what()) + ")");
        win_ = -1;
      }
    }
    naive_wins_ = naive_.verified && (win_ < 0 || naive_.ms <= win_ms_);
    res_.found = naive_wins_ || win_ >= 0;
    res_.naive_ms = naive_ms_;
    wv_ = naive_wins_ || win_ < 0 ? &vs_[0] : &vs_[win_];
    if (naive_wins_) {
      res_.kernel = naive_k_;
      res_.schedule = schedule::default_schedule(space_);
      res_.axon_ms = naive_.ms;
    } else if (win_ >= 0) {
      res_.kernel = win_kernel_;
      res_.schedule = win_schedule_;
      res_.axon_ms = win_ms_;
    } else {
      res_.schedule = schedule::default_schedule(space_);
    }
  }

  // report.json (docs/optimize.md), stored in the database when a kernel was
  // found and the run was not interrupted. Throws InternalError when not
  // even the naive kernel could be built; when nothing passed, res.failure
  // says why (the CLI exits 3).
  OptimizeResult report();

 private:
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
  bool interrupted() const { return opts_.interrupt && opts_.interrupt->load(); }
  schedule::Space space_of(const ir::Graph& g) const {
    if (std::getenv(kNaiveOnly)) return {};
    return be_->space(g);
  }
  // A stage that fails on this program is reported, skipped, and the search
  // goes on without it (optimize.h).
  void warn(const std::string& w) {
    res_.warnings.push_back(w);
    if (opts_.on_warning) opts_.on_warning(w);
  }
  void report_progress() {
    progress_.elapsed_s = elapsed();
    if (opts_.on_progress) opts_.on_progress(progress_);
  }
  tuning::TuningKey variant_key(const ir::Graph& vg, bool original) const {
    tuning::TuningKey k = key_;
    if (!original) k.graph += " rewritten " + hex16(vg.structural_hash());
    return k;
  }
  void search_variant(size_t ci);
  std::string offset_screen(const Variant& v);
  nlohmann::json naive_reason(size_t candidates, int verified) const;
  std::vector<search::Evaluation> evaluate(const ir::Graph& vg, const tuning::TuningKey& vkey, int variant,
                                           const std::vector<schedule::Schedule>& batch);

  const ir::Graph& g_;
  const OptimizeOptions& opts_;
  std::chrono::steady_clock::time_point t0_;
  target::Target t_;
  std::unique_ptr<backend::Backend> be_;
  std::vector<std::string> flags_;
  runtime::CompileOptions co_;
  tuning::TuningKey key_, report_key_;
  std::unique_ptr<tuning::TuningDb> db_;
  runtime::MeasureOptions mo_;
  OptimizeResult res_;
  schedule::Space space_;
  std::unique_ptr<runtime::Measurer> m_;
  // offset_screen's inputs (offset by kScreenOffset) and whether the
  // original's naive kernel is within its budget on them.
  std::unique_ptr<ir::Graph> screen_graph_;
  std::unique_ptr<runtime::Measurer> offset_m_;
  uint64_t screen_key_ = 0;
  bool original_offset_ok_ = false;
  Progress progress_;
  double search_t0_ = 0;
  // The baseline.
  codegen::KernelSource naive_k_;
  runtime::Measurement naive_;
  bool naive_built_ = false;
  std::string naive_text_;  // the generated naive source: every schedule emitting it is the naive kernel
  double naive_ms_ = 0;
  json naive_check_;  // the worst element of a naive kernel over its budget
  std::optional<WorstElement> naive_worst_;
  // The variants and their searches.
  std::vector<Variant> vs_;
  json rw_;
  std::vector<size_t> chosen_;
  double max_err_ = 0;
  int compiled_ = 0;
  double best_ms_ = 0;
  // Two schedules (of any variant) that emit the same source are one binary:
  // measured once (tinygrad's duplicate-binary rule). Keyed by the source text itself.
  std::map<std::string, runtime::Measurement> by_source_;
  int trials_used_ = 0;
  std::set<std::string> candidate_errors_;  // each distinct failure of a candidate is warned about once
  // Compiled candidates that failed their check (over budget, or broken at
  // load or run): report.json's search.rejected, the first kMaxRejected.
  static constexpr size_t kMaxRejected = 64;
  json rejected_ = json::array();
  std::set<std::string> rejected_sources_;
  TimingAnchor anchor_;                     // one for every variant's search: their times compare too
  // The winner.
  int win_ = -1;
  schedule::Schedule win_schedule_;
  double win_ms_ = 0;
  json final_round_;
  codegen::KernelSource win_kernel_;
  bool naive_wins_ = false;
  const Variant* wv_ = nullptr;
};

std::vector<search::Evaluation> Run::evaluate(const ir::Graph& vg, const tuning::TuningKey& vkey, int variant,
                                              const std::vector<schedule::Schedule>& batch) {
  std::vector<std::string> sources(batch.size());
  std::vector<runtime::Measurement> ms(batch.size());
  std::vector<codegen::KernelSource> fresh;
  std::vector<size_t> fresh_of;
  for (size_t i = 0; i < batch.size(); ++i) {
    try {
      codegen::KernelSource k = be_->emit(vg, batch[i]);
      sources[i] = k.source + '\0' + k.header;
      if (by_source_.count(sources[i])) continue;
      bool dup = false;
      for (const auto& f : fresh) dup = dup || f.source + '\0' + f.header == sources[i];
      if (!dup) {
        fresh.push_back(std::move(k));
        fresh_of.push_back(i);
      }
    } catch (const std::exception& e) {
      // A code generator that declines a legal point: not compiled, not timed.
      ms[i].error = std::string("emit failed: ") + e.what();
    }
  }
  // Checked against the original; timed beside the anchor once there is one.
  std::vector<runtime::Measurement> measured;
  if (anchor_.set()) {
    runtime::Timing now;
    measured = m_->measure(fresh, anchor_.kernel(), &now);
    anchor_.scale(measured, now);
  } else {
    measured = m_->measure(fresh);
    std::vector<schedule::Schedule> fresh_schedules;
    for (size_t i : fresh_of) fresh_schedules.push_back(batch[i]);
    anchor_.choose(fresh, fresh_schedules, measured, variant);
  }
  for (size_t f = 0; f < fresh.size(); ++f) by_source_[sources[fresh_of[f]]] = measured[f];
  std::vector<search::Evaluation> ev;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!sources[i].empty()) ms[i] = by_source_.at(sources[i]);
    compiled_ += ms[i].compiled ? 1 : 0;
    if (ms[i].verified) max_err_ = std::max(max_err_, ms[i].max_error_over_budget);
    ev.push_back({ms[i].verified, ms[i].ms});
    if (db_) db_->record_candidate(vkey, {search::schedule_key(batch[i]), ms[i].ms, ms[i].verified});
    // A candidate axon could not emit, compile or run is axon's own
    // failure: said once per distinct error, and skipped (a candidate over
    // its error budget is an ordinary outcome of the search).
    const std::string& err = ms[i].error;
    if (ms[i].compiled && !ms[i].verified && !sources[i].empty() && rejected_.size() < kMaxRejected &&
        rejected_sources_.insert(sources[i]).second)
      rejected_.push_back({{"variant", variant}, {"schedule", schedule::to_json(batch[i])}, {"error", err}});
    bool broken = !ms[i].verified && !err.empty() && (!ms[i].compiled || err.rfind("load", 0) == 0);
    if (broken && candidate_errors_.insert(err).second)
      warn("a candidate failed (" + err + "), schedule " + schedule::to_json(batch[i]).dump() + "; skipped");
  }
  return ev;
}

// A rewrite is proved over the reals; in float32 it may still lose digits
// the spec's own order keeps (|p|^2 + |q|^2 - 2 p.q where p is close to q
// and far from 0). Before a rewritten variant is searched, its naive
// kernel is checked against the original graph's reference on inputs
// offset by 1000 (the gate's large_mean): over its budget there, where the
// original's naive kernel is within it, the variant is refused with the
// measured error. When the original's naive kernel misses that budget too,
// the inputs say nothing about the rewrite and the variant goes on.
//
// Both graphs are checked shrunk (screen_sizes: every parameter size above
// 16 to a small prime no size of the graph uses, the same one in both), so
// that the check costs two small compiles, not two naive runs of the
// spec's sizes; a graph that cannot be shrunk is checked as it is.
std::map<int64_t, int64_t> screen_sizes(const ir::Graph& g) {
  std::set<int64_t> used, big;
  for (ir::NodeId i = 0; i < g.size(); ++i)
    for (int64_t d : g[i].type.shape) used.insert(d);
  for (const ir::ParamInfo& p : g.params)
    for (int64_t d : p.type.shape)
      if (d > 16) big.insert(d);
  std::map<int64_t, int64_t> to;
  const int64_t primes[] = {17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97};
  size_t next = 0;
  for (int64_t d : big) {
    while (next < std::size(primes) && used.count(primes[next])) ++next;
    if (next == std::size(primes) || primes[next] >= d) break;
    to[d] = primes[next++];
  }
  return to;
}

std::pair<ir::Graph, ir::Graph> shrunk_pair(const ir::Graph& original, const ir::Graph& variant) {
  const std::map<int64_t, int64_t> sizes = screen_sizes(original);
  try {
    std::pair<ir::Graph, ir::Graph> p{rewrite::resize(original, sizes), rewrite::resize(variant, sizes)};
    ir::verify(p.first);
    ir::verify(p.second);
    if (abi_mismatch(p.first, p.second).empty()) return p;
  } catch (const std::exception&) {
  }
  return {original, variant};
}

std::string Run::offset_screen(const Variant& v) {
  try {
    auto [og, vg] = shrunk_pair(g_, v.graph);
    // One Measurer (inputs and float64 reference) per shrunk original.
    const uint64_t key = og.structural_hash();
    if (!offset_m_ || screen_key_ != key) {
      screen_graph_ = std::make_unique<ir::Graph>(og);
      runtime::MeasureOptions o = mo_;
      o.check_inputs = 1;
      o.check_seed = mo_.check_seed + 1000;
      o.input_offset = kScreenOffset;
      offset_m_ = std::make_unique<runtime::Measurer>(*screen_graph_, o);
      original_offset_ok_ = offset_m_->check_only(be_->emit_naive(*screen_graph_)).verified;
      screen_key_ = key;
    }
    if (!original_offset_ok_) return "";
    runtime::Measurement m = offset_m_->check_only(be_->emit_naive(vg));
    if (m.verified || !m.compiled) return "";
    std::ostringstream why;
    why << "loses accuracy: on inputs offset by " << kScreenOffset << " its naive kernel is "
        << m.max_error_over_budget << " x the error budget, the original's within it ("
        << (vg.params[0].type.shape == v.graph.params[0].type.shape ? "" : "at smaller sizes; ") << m.error << ")";
    std::string steps;
    for (const rewrite::AppliedRewrite& a : v.steps) steps += (steps.empty() ? "" : ", ") + a.move.kind;
    warn("the variant after " + steps + " " + why.str() + "; not searched");
    return why.str();
  } catch (const std::exception& e) {
    warn(std::string("the offset check of a rewritten variant failed (") + first_line(e.what()) + "); searched as usual");
    return "";
  }
}

void Run::search_variant(size_t ci) {
  Variant& v = vs_[chosen_[ci]];
  const ir::Graph& vg = v.graph;
  bool original = chosen_[ci] == 0;
  size_t left_searches = chosen_.size() - ci;
  double left_s = opts_.budget_s - (elapsed() - search_t0_);
  if (!original && (interrupted() || left_s <= 0 || (opts_.trials > 0 && trials_used_ >= opts_.trials))) {
    v.why_not = interrupted() ? "interrupted" : left_s <= 0 ? "budget spent" : "trials spent";
    return;
  }
  if (!original) {
    std::string why = offset_screen(v);
    if (!why.empty()) {
      v.why_not = why;
      return;
    }
  }
  tuning::TuningKey vkey = variant_key(vg, original);
  std::vector<search::Trial> prior;
  if (db_ && opts_.resume)
    for (const auto& c : db_->candidates(vkey))
      prior.push_back({schedule::schedule_from_json(json::parse(c.schedule_json)), {c.verified, c.ms}});

  search::SearchFunctions fns;
  fns.why_illegal = [&](const schedule::Schedule& s) { return be_->why_illegal(vg, s); };
  fns.predicted_seconds = [&](const schedule::Schedule& s) { return be_->predicted_seconds(vg, s); };
  fns.evaluate = [&](const std::vector<schedule::Schedule>& batch) {
    return evaluate(vg, vkey, static_cast<int>(chosen_[ci]), batch);
  };
  fns.on_trial = [&](const search::Trial& tr, const search::Trial*) {
    ++progress_.tried;
    progress_.compiled = compiled_;
    progress_.verified += tr.eval.ok ? 1 : 0;
    if (tr.eval.ok && (best_ms_ == 0 || tr.eval.ms < best_ms_)) best_ms_ = tr.eval.ms;
    if (best_ms_ > 0) progress_.best_ms = best_ms_;
    report_progress();
  };

  search::SearchOptions so;
  // An even share of what is left; time a search leaves unused goes to the next.
  so.budget_s = std::max(0.0, left_s) / static_cast<double>(left_searches);
  so.trials = opts_.trials > 0
                  ? std::max(1, static_cast<int>((opts_.trials - trials_used_ + left_searches - 1) / left_searches))
                  : 0;
  so.seed = opts_.seed;
  so.prior = prior;
  so.interrupt = opts_.interrupt;
  v.budget_s = so.budget_s;
  v.trials = so.trials;
  v.prior = static_cast<int>(prior.size());
  try {
    v.sr = search::autotune(v.space, fns, so);
    v.searched = true;
    trials_used_ += static_cast<int>(v.sr.history.size());
  } catch (const std::exception& e) {
    v.sr = {};
    v.why_not = "its search failed: " + first_line(e.what());
    warn(std::string("the search of ") + (original ? "the original graph" : "a rewritten variant") + " failed (" +
         first_line(e.what()) + "); skipped");
  }
}

// Why the naive kernel is the answer (report.json "naive_reason", with the
// variant "naive"): {"why": "empty space" | "none passed" | "not beaten",
// "detail": one line, "stages": the stage kinds of the best schedule and
// "best_ms" (not beaten), "rejected": the first rejected candidate's error
// (none passed)}.
nlohmann::json Run::naive_reason(size_t candidates, int verified) const {
  json r;
  bool any_space = false;
  for (const Variant& v : vs_) any_space |= !v.space.knobs.empty();
  if (!any_space) {
    r["why"] = "empty space";
    r["detail"] = std::getenv(kNaiveOnly) ? std::string("every schedule space is empty (") + kNaiveOnly + " is set)"
                                          : "the graph's schedule space is empty: no generator takes it";
    for (const std::string& w : res_.warnings)
      if (w.find("schedule space could not be built") != std::string::npos) r["detail"] = w;
    return r;
  }
  if (win_ < 0) {
    r["why"] = "none passed";
    r["detail"] = "none of the " + std::to_string(candidates) + " scheduled candidate(s) passed: " +
                  std::to_string(compiled_) + " compiled, " + std::to_string(verified) + " verified";
    if (!rejected_.empty()) r["rejected"] = rejected_.front();
    return r;
  }
  r["why"] = "not beaten";
  r["best_ms"] = win_ms_;
  r["stages"] = json::array();
  try {
    for (const codegen::StageInfo& st : be_->kernel_info(vs_[win_].graph, win_schedule_).stages)
      r["stages"].push_back(st.kind);
  } catch (const std::exception&) {  // the stages are a detail of the line below
  }
  std::ostringstream d;
  d << "the naive kernel (" << naive_.ms << " ms) was timed no slower than the best schedule (" << win_ms_ << " ms, "
    << schedule::to_json(win_schedule_).dump() << ")";
  r["detail"] = d.str();
  return r;
}

OptimizeResult Run::report() {
  // Why the search as a whole stopped: interrupted, else the trials or the
  // budget if any search ran into them, else every space was exhausted.
  std::string stop;
  size_t candidates = 0, prior_total = 0;
  int verified = 0;
  for (const Variant& v : vs_) {
    if (!v.searched) continue;
    candidates += v.sr.history.size();
    prior_total += static_cast<size_t>(v.prior);
    for (const auto& h : v.sr.history) verified += h.eval.ok ? 1 : 0;
  }
  auto any_stop = [&](const char* why) {
    return std::any_of(vs_.begin(), vs_.end(), [&](const Variant& v) { return v.searched && v.sr.stop_reason == why; });
  };
  if (interrupted() || any_stop("interrupted")) stop = "interrupted";
  else if (opts_.trials > 0 && trials_used_ >= opts_.trials) stop = "trials";
  else if (any_stop("budget") || any_stop("trials")) stop = any_stop("budget") ? "budget" : "trials";
  else stop = vs_[0].sr.stop_reason.empty() ? "space exhausted" : vs_[0].sr.stop_reason;
  res_.stop_reason = stop;

  for (size_t i = 0; i < vs_.size(); ++i) {
    const Variant& v = vs_[i];
    json s = {{"steps", steps_kinds(v)}, {"hash", hex16(v.graph.structural_hash())}, {"cost", cost_json(v.cost)},
              {"space_points", v.space.size()}, {"space_knobs", v.space.knobs.size()},
              {"predicted_ms", v.predicted_s * 1e3}};
    if (v.space.knobs.empty()) s["space_points"] = 0;
    if (!v.searched) {
      s["why_not"] = v.why_not;
      rw_["not_searched"].push_back(s);
      continue;
    }
    int ok = 0;
    for (const auto& h : v.sr.history) ok += h.eval.ok ? 1 : 0;
    s["candidates"] = v.sr.history.size();
    s["verified"] = ok;
    s["best_ms"] = v.sr.found ? v.sr.best.eval.ms : 0.0;
    s["budget_s"] = v.budget_s;
    s["trials"] = v.trials;
    s["stop_reason"] = v.sr.stop_reason;
    s["winner"] = !naive_wins_ && static_cast<int>(i) == win_;
    rw_["searched"].push_back(s);
  }
  rw_["applied"] = applied_json(g_, *wv_);
  rw_["winner_hash"] = hex16(wv_->graph.structural_hash());
  rw_["winner_steps"] = json::array();
  for (const auto& st : wv_->steps) rw_["winner_steps"].push_back(move_json(st.move));
  rw_["checked_against"] = "the original graph's float64 reference and error budget";

  json r;
  r["entry"] = g_.entry;
  r["target"] = target::to_json(t_);
  r["variant"] = naive_wins_ ? "naive" : res_.found ? "schedule" : "none";
  r["time_ms"] = {{"axon", res_.axon_ms}, {"naive", res_.naive_ms}};
  r["speedup_vs_naive"] = res_.axon_ms > 0 ? res_.naive_ms / res_.axon_ms : 0;
  // The roofline of the work the winner does (its graph, rewritten or not);
  // the spec's own floor beside it when a rewrite changed the work.
  r["roofline"] = roofline_json(wv_->graph, t_, res_.axon_ms);
  if (!wv_->steps.empty()) r["roofline"]["spec_floor_ms"] = roofline_json(g_, t_, res_.axon_ms)["floor_ms"];
  r["verification"] = {{"inputs_tried", m_->inputs_tried()}, {"max_error_over_budget", max_err_},
                       {"reference", "original graph"}, {"naive_within_budget", naive_.verified}};
  if (!naive_check_.is_null()) r["verification"]["naive_check"] = naive_check_;
  r["schedule"] = schedule::to_json(res_.schedule);
  {
    // How the kernel was compiled for every timing and check: what a user builds it with.
    std::string cmd = co_.cxx;
    for (const std::string& f : flags_) cmd += " " + f;
    r["build"] = {{"compiler", co_.cxx}, {"compiler_version", runtime::compiler_version(co_.cxx)}, {"flags", flags_},
                  {"command", cmd + " kernel.cpp -o kernel.so"}};
  }
  r["space"] = {{"knobs", wv_->space.knobs.size()}, {"points", wv_->space.size()}};
  if (res_.found && !naive_wins_) r["kernel"] = kernel_report(wv_->graph, be_->kernel_info(wv_->graph, res_.schedule));
  r["rewrites"] = rw_;
  r["search"] = {{"candidates", candidates}, {"compiled", compiled_}, {"verified", verified},
                 {"seconds", elapsed()}, {"stop_reason", stop}, {"seed", opts_.seed},
                 {"resumed_from", prior_total}, {"anchor", anchor_.to_json()}, {"final_round", final_round_},
                 {"rejected", rejected_}};
  if (!res_.found) {
    // Nothing passed. When nothing was even built there is nothing to
    // report on the spec: that is axon's own failure.
    if (!naive_.compiled && compiled_ == 0)
      throw InternalError("no kernel could be built for this graph: the naive kernel: " + naive_.error + "; " +
                          std::to_string(candidates) + " scheduled candidate(s), none compiled");
    res_.failure = "no kernel passed its error-budget check: ";
    if (naive_worst_)
      res_.failure += "the naive kernel misses it at " + describe(*naive_worst_);
    else
      res_.failure += "the naive kernel: " + (naive_.error.empty() ? std::string("not built") : naive_.error);
    res_.failure += "; and none of the " + std::to_string(candidates) + " scheduled candidate(s) passed";
    r["failure"] = res_.failure;
  }
  if (naive_wins_) r["naive_reason"] = naive_reason(candidates, verified);
  r["warnings"] = res_.warnings;
  if (db_) {
    r["search"]["database"] = db_->path();
    if (stop != "interrupted" && res_.found) db_->store_report(report_key_, r.dump());
  }
  res_.report = r;
  return res_;
}


}  // namespace

OptimizeResult optimize(const ir::Graph& g, const OptimizeOptions& opts) {
  Run run(g, opts);
  run.prepare();
  if (std::optional<OptimizeResult> stored = run.answer_from_database()) return *stored;
  run.measure_peaks();
  run.measure_baseline();
  run.explore_rewrites();
  run.search_variants();
  run.final_round();
  run.choose_result();
  return run.report();
}

std::string report_markdown(const json& r) {
  std::ostringstream o;
  auto num = [](const json& j, const char* k) { return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0; };
  o << "# axon optimize: " << r.value("entry", std::string("?")) << "\n\n";
  if (r.contains("spec")) o << "- spec: `" << r["spec"].get<std::string>() << "`\n";
  o << "- target: " << r["target"].value("name", std::string("?")) << "\n";
  o << "- kernel: " << r.value("variant", std::string("?")) << ", schedule `" << r["schedule"].dump() << "`\n";
  if (r.contains("naive_reason")) o << "- why the naive kernel: " << r["naive_reason"].value("detail", std::string("?")) << "\n";
  o << "- time: " << num(r["time_ms"], "axon") << " ms (naive " << num(r["time_ms"], "naive") << " ms), speedup "
    << num(r, "speedup_vs_naive") << "x\n";
  const json& rf = r["roofline"];
  o << "- roofline: " << num(rf, "flops") << " FLOP, " << num(rf, "bytes") << " bytes, floor " << num(rf, "floor_ms")
    << " ms, fraction " << num(rf, "fraction") << (rf.value("fraction_above_one", false) ? " (above 1: check the peaks)" : "")
    << "\n";
  if (r.contains("build") && r["build"].contains("command"))
    o << "- build: `" << r["build"]["command"].get<std::string>() << "` (" << r["build"].value("compiler_version", std::string())
      << ")\n";
  o << "- verification: " << r["verification"].value("inputs_tried", 0) << " inputs, max error "
    << num(r["verification"], "max_error_over_budget") << " of the budget\n";
  if (!r["verification"].value("naive_within_budget", true)) {
    const json& nc = r["verification"].value("naive_check", json::object());
    o << "- naive kernel: over its error budget";
    if (nc.contains("element"))
      o << " at output " << nc.value("output", 0) << ", element " << nc["element"].dump() << ": error "
        << nc["error"].dump() << ", budget " << nc["budget"].dump() << " (" << nc["error_over_budget"].dump()
        << "x)";
    o << "; not a candidate\n";
  }
  if (r.contains("failure")) o << "- **no kernel passed**: " << r["failure"].get<std::string>() << "\n";
  const json& s = r["search"];
  o << "- search: " << s.value("candidates", 0) << " candidates, " << s.value("compiled", 0) << " compiled, "
    << s.value("verified", 0) << " verified, " << num(s, "seconds") << " s, stopped: "
    << s.value("stop_reason", std::string("?")) << "\n";
  if (s.contains("anchor") && s["anchor"].value("set", false))
    o << "- timing anchor: " << num(s["anchor"], "first_ms") << " ms at first, timed again beside "
      << s["anchor"].value("batches", 0) << " batches at " << num(s["anchor"], "fastest") << "x to "
      << num(s["anchor"], "slowest") << "x of that; search times are scaled back to its first time\n";
  if (s.contains("final_round") && s["final_round"].value("timed", 0) > 0) {
    o << "- final round: the " << s["final_round"].value("timed", 0)
      << " fastest distinct kernels timed again side by side (search ms -> final ms):";
    for (const json& c : s["final_round"]["candidates"])
      o << " " << num(c, "search_ms") << " -> " << num(c, "ms") << (c.value("winner", false) ? " (winner)" : "") << ";";
    o << "\n";
  }
  if (r.contains("warnings") && !r["warnings"].empty()) {
    o << "- warnings (each stage skipped, the search went on):\n";
    for (const json& w : r["warnings"]) o << "  - " << w.get<std::string>() << "\n";
  }
  if (r.contains("rewrites") && r["rewrites"].is_object()) {
    const json& rw = r["rewrites"];
    if (!rw.value("enabled", true)) {
      o << "- rewrites: off (--no-rewrites)\n";
    } else {
      o << "- rewrites: " << rw.value("explored", 0) << " variant(s) explored (" << rw.value("proofs", 0)
        << " proofs, " << rw.value("refused", 0) << " refused, stopped: " << rw.value("stop_reason", std::string("?"))
        << "), " << rw["searched"].size() << " searched\n";
      for (const json& v : rw["searched"]) {
        std::string steps;
        for (const json& k : v["steps"]) steps += (steps.empty() ? "" : " + ") + k.get<std::string>();
        o << "  - " << (steps.empty() ? "original" : steps) << ": " << v.value("candidates", 0) << " candidates, best "
          << num(v, "best_ms") << " ms (predicted " << num(v, "predicted_ms") << " ms)"
          << (v.value("winner", false) ? " **winner**" : "") << "\n";
      }
    }
    if (rw.contains("applied") && !rw["applied"].empty()) {
      o << "\n## Rewrites applied (checked against the original spec)\n\n";
      o << "| rule | where | proof | FLOPs before -> after | bytes before -> after |\n|---|---|---|---|---|\n";
      for (const json& a : rw["applied"]) {
        const json& p = a["proof"];
        o << "| " << a.value("rule", std::string("?")) << " | " << a.value("detail", std::string()) << " | "
          << p.value("status", std::string("?")) << " by " << p.value("solver", std::string("?")) << " in "
          << num(p, "solver_ms") << " ms (" << p.value("queries", 0) << " queries) | ";
        if (a.contains("before"))
          o << num(a["before"], "flops") << " -> " << num(a["after"], "flops") << " | " << num(a["before"], "bytes")
            << " -> " << num(a["after"], "bytes");
        else
          o << " | ";
        o << " |\n";
      }
      o << "\n";
    }
  }
  return o.str();
}

}  // namespace axon::optimize
