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
#include <random>
#include <set>
#include <sstream>

#include "analysis/cost.h"
#include "codegen/c_like/naive_cpp.h"
#include "codegen/cpu/emit_cpu.h"
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
  double floor_ms = analysis::roofline_floor_ms(c, t.peaks.fma_gflops_all, t.peaks.stream_gbs_all);
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
          {"rule_lhs", m.rule_lhs}, {"rule_rhs", m.rule_rhs}};
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
double best_predicted(const ir::Graph& g, const schedule::Space& sp, const target::Target& t, uint64_t seed) {
  if (sp.knobs.empty()) return 0;
  std::mt19937_64 rng(seed);
  double best = 0;
  auto consider = [&](const schedule::Schedule& s) {
    if (!schedule::why_illegal(g, s, t).empty()) return;
    double p = schedule::predicted_seconds(g, s, t);
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
std::vector<Finalist> finalists(const std::vector<Variant>& vs, const target::Target& t) {
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
      f.kernel = codegen::emit_cpu(vs[static_cast<size_t>(f.variant)].graph, f.schedule, t);
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
    ranked.push_back({schedule::predicted_seconds(vs[static_cast<size_t>(all[i].variant)].graph, all[i].schedule, t), i});
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

}  // namespace

OptimizeResult optimize(const ir::Graph& g, const OptimizeOptions& opts) {
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  auto interrupted = [&] { return opts.interrupt && opts.interrupt->load(); };
  // Before anything (the peak probe included) can load OpenMP.
  runtime::pin_openmp_threads();
  target::Target t = opts.target;
  std::vector<std::string> flags = codegen::cpu_compile_flags(t, true);
  runtime::CompileOptions co;
  // Candidates of the original graph are stored under `key`; those of a
  // variant under the key with the variant's hash appended. The report is
  // stored under `key` when rewrites are on and under a key of its own when
  // off, so that --no-rewrites never answers with a rewritten kernel.
  tuning::TuningKey key{graph_key(g), t.fingerprint(),
                        runtime::compiler_version(co.cxx) + " codegen " + std::to_string(codegen::kCodegenVersion)};
  tuning::TuningKey report_key = key;
  if (!opts.rewrites) report_key.graph += " no-rewrites";
  auto variant_key = [&](const ir::Graph& vg, bool original) {
    tuning::TuningKey k = key;
    if (!original) k.graph += " rewritten " + hex16(vg.structural_hash());
    return k;
  };
  std::unique_ptr<tuning::TuningDb> db;
  if (opts.use_db) db = std::make_unique<tuning::TuningDb>(opts.db_path.empty() ? tuning::default_db_path() : opts.db_path);

  runtime::MeasureOptions mo;
  mo.flags = flags;
  // A working set that cannot stay in cache between calls of a real program
  // is timed cold (copies rotated through the stream probe's working set), as
  // axon bench times it: warm timing would rank streaming stores, which
  // only pay past the caches, as losses.
  if (analysis::graph_cost(g).bytes > kColdAboveBytes) mo.cold_bytes = target::cold_rotation_bytes(t);
  OptimizeResult res;
  // A stage that fails on this program is reported, skipped, and the search
  // goes on without it (optimize.h).
  auto warn = [&](const std::string& w) {
    res.warnings.push_back(w);
    if (opts.on_warning) opts.on_warning(w);
  };
  schedule::Space space;
  try {
    space = schedule::schedule_space(g, t);
  } catch (const std::exception& e) {
    warn("the graph's schedule space could not be built (" + first_line(e.what()) +
         "); only the naive kernel and the rewritten variants are tried");
  }

  // Answer from the database: rebuild the winner's graph (the stored rule
  // sequence replayed on the original), emit the winner of the stored report
  // again and re-check it once on one input of the ORIGINAL graph (no
  // timing), so that a stale row cannot hand out a wrong kernel.
  if (db && !opts.resume) {
    auto stored = db->report(report_key);
    if (stored) try {
      json report = json::parse(*stored);
      std::optional<ir::Graph> kg = g;
      if (report.contains("rewrites") && report["rewrites"].contains("winner_steps") &&
          !report["rewrites"]["winner_steps"].empty()) {
        std::vector<rewrite::Move> moves;
        for (const json& m : report["rewrites"]["winner_steps"]) moves.push_back(move_from_json(m));
        kg = replay(g, moves);
        if (kg && hex16(kg->structural_hash()) != report["rewrites"].value("winner_hash", std::string())) kg.reset();
        if (kg && !abi_mismatch(g, *kg).empty()) kg.reset();
      }
      if (kg) {
        schedule::Schedule s = schedule::schedule_from_json(report.at("schedule"));
        bool naive = report.value("variant", "") == "naive";
        codegen::KernelSource k = naive ? codegen::emit_naive_cpp(g) : codegen::emit_cpu(*kg, s, t);
        // The re-check costs one interpreter run; past kRecheckSeconds that
        // alone would break the promise of an answer within a second, so the
        // row (verified when stored, same target and compiler) is trusted.
        bool recheck = interpreter_seconds(analysis::graph_cost(g)) <= kRecheckSeconds;
        bool verified = true;
        if (recheck) {
          runtime::MeasureOptions once = mo;
          once.check_inputs = 1;
          runtime::Measurer m(g, once);
          verified = m.check_only(k).verified;
        }
        if (verified) {
          res.kernel = k;
          res.schedule = s;
          res.axon_ms = report["time_ms"].value("axon", 0.0);
          res.naive_ms = report["time_ms"].value("naive", 0.0);
          res.from_db = true;
          res.stop_reason = "database";
          report["search"]["stop_reason"] = "database";
          report["search"]["seconds"] = elapsed();
          report["search"]["database"] = db->path();
          report["verification"]["rechecked"] = recheck;
          res.report = report;
          return res;
        }
      }
      // Fall through to a fresh search when the stored winner fails now (or
      // its rewrites no longer replay to the same graph).
    } catch (const std::exception& e) {
      warn("the stored answer could not be rebuilt (" + first_line(e.what()) + "); searching again");
    }
  }

  if (t.peaks.fma_gflops_all <= 0 || t.peaks.stream_gbs_all <= 0) try {
      target::measure_peaks(t);
    } catch (const std::exception& e) {  // the peaks only place the result against the roofline
      warn("the hardware peaks could not be measured (" + first_line(e.what()) + "); the roofline reads 0");
    }

  // The reference, its inputs and error bounds come from the original graph
  // only: every variant's kernel is judged by what the spec means.
  runtime::Measurer m(g, mo);
  Progress progress;
  auto report_progress = [&] {
    progress.elapsed_s = elapsed();
    if (opts.on_progress) opts.on_progress(progress);
  };

  // The naive kernel: the baseline and the fallback winner, when it passes
  // its own check. When it does not, it is only the baseline times compare
  // with (timed all the same), and the search must find a kernel that passes.
  codegen::KernelSource naive_k;
  runtime::Measurement naive;
  bool naive_built = false;
  std::string naive_text;  // the generated naive source: every schedule emitting it is the naive kernel
  try {
    naive_k = codegen::emit_naive_cpp(g);
    naive_text = naive_k.source + '\0' + naive_k.header;
    naive_built = true;
  } catch (const std::exception& e) {
    naive.error = "emit failed: " + first_line(e.what());
    warn("the naive kernel could not be generated (" + first_line(e.what()) + "); the search goes on without a baseline");
  }
  if (naive_built) {
    if (std::optional<std::string> path = naive_kernel_override()) {
      naive_k.source = read_override(*path);
      warn("the naive kernel's source is read from " + *path + " (" + kNaiveKernelOverride + ")");
    }
    naive = m.measure({naive_k}).at(0);
  }
  double naive_ms = naive.ms;
  json naive_check;  // the worst element of a naive kernel over its budget
  std::optional<WorstElement> naive_worst;
  if (naive_built && !naive.verified && naive.compiled) {
    naive_worst = worst_element(g, m, naive_k, flags);
    naive_check = naive_worst ? to_json(*naive_worst) : json{{"error", naive.error}};
    warn("the naive kernel misses its error budget: " + (naive_worst ? describe(*naive_worst) : naive.error) +
         "; it cannot be the result, the search goes on for a kernel that passes");
    try {
      std::vector<runtime::Timing> tm = m.time_side_by_side({naive_k}, 2);
      if (!tm.empty() && tm[0].reps > 0) naive_ms = tm[0].median_ms;
    } catch (const std::exception&) {
      // Untimed: speedups against it read 0.
    }
  } else if (naive_built && !naive.verified) {
    warn("the naive kernel could not be built (" + naive.error + "); the search goes on without a baseline");
  }
  progress.naive_ms = naive_ms;
  report_progress();
  const double search_t0 = elapsed();  // the budget counts from here (rewrites included)

  // Rewrites: the proved variants of the graph, then the ones worth a search.
  std::vector<Variant> vs;
  vs.push_back(make_variant(g, {}, rewrite::cost(g), space));
  try {
    vs[0].predicted_s = best_predicted(g, space, t, opts.seed);
  } catch (const std::exception& e) {
    warn("the cost model failed on the graph (" + first_line(e.what()) + "); its points are ranked as unknown");
  }
  json rw = {{"enabled", opts.rewrites}, {"explored", 0}, {"proofs", 0}, {"refused", 0}, {"seconds", 0.0},
             {"stop_reason", opts.rewrites ? "" : "disabled"}, {"searched", json::array()},
             {"not_searched", json::array()}, {"applied", json::array()}};
  if (opts.rewrites && !interrupted()) {
    double explore_t0 = elapsed();
    rewrite::ExploreOptions eo;
    // A small share of the budget: at most 5 s, a tenth of it, at least 0.5 s.
    eo.max_seconds = std::clamp(0.1 * opts.budget_s, 0.5, 5.0);
    eo.max_variants = 24;
    eo.k = eo.max_variants;  // every variant: the schedule cost model ranks them below
    eo.prove.timeout_ms = 1000;
    eo.prove.budget_ms = static_cast<unsigned>(std::max(500.0, eo.max_seconds * 1000));
    std::string lib = rewrite::default_library_path();
    if (!lib.empty()) eo.library = rewrite::load_library(lib);
    rewrite::ExploreResult ex;
    try {
      ex = rewrite::explore(g, eo);
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
        v.space = schedule::schedule_space(v.graph, t);
        v.predicted_s = best_predicted(v.graph, v.space, t, opts.seed);
        vs.push_back(std::move(v));
      } catch (const std::exception& e) {
        warn("the rewritten variant ending in " + label + " could not be planned (" + first_line(e.what()) +
             "); skipped");
      }
    }
    int refused = 0;
    for (const auto& c : ex.tried) refused += c.proof.status == verify::smt::ProofStatus::Proved ? 0 : 1;
    rw["explored"] = ex.variants;
    rw["proofs"] = ex.proofs;
    rw["refused"] = refused;
    rw["iterations"] = ex.iterations;
    rw["stop_reason"] = rewrite::stop_reason_name(ex.stop);
    rw["seconds"] = elapsed() - explore_t0;
    rw["library_rules"] = eo.library.size();
  }
  std::vector<size_t> chosen = choose(vs, g, opts.rewrites ? opts.rewrite_variants : 0);

  double max_err = naive.verified ? naive.max_error_over_budget : 0.0;
  int compiled = 0;
  double best_ms = 0;
  // Two schedules (of any variant) that emit the same source are one binary:
  // measured once (tinygrad's duplicate-binary rule). Keyed by the source text itself.
  std::map<std::string, runtime::Measurement> by_source;
  if (naive_built) by_source[naive_text] = naive;
  int trials_used = 0;
  std::set<std::string> candidate_errors;  // each distinct failure of a candidate is warned about once
  // Compiled candidates that failed their check (over budget, or broken at
  // load or run): report.json's search.rejected, the first kMaxRejected.
  constexpr size_t kMaxRejected = 64;
  json rejected = json::array();
  std::set<std::string> rejected_sources;
  TimingAnchor anchor;  // one for every variant's search: their times compare too
  for (size_t ci = 0; ci < chosen.size(); ++ci) {
    Variant& v = vs[chosen[ci]];
    const ir::Graph& vg = v.graph;
    bool original = chosen[ci] == 0;
    size_t left_searches = chosen.size() - ci;
    double left_s = opts.budget_s - (elapsed() - search_t0);
    if (!original && (interrupted() || left_s <= 0 || (opts.trials > 0 && trials_used >= opts.trials))) {
      v.why_not = interrupted() ? "interrupted" : left_s <= 0 ? "budget spent" : "trials spent";
      continue;
    }
    tuning::TuningKey vkey = variant_key(vg, original);
    std::vector<search::Trial> prior;
    if (db && opts.resume)
      for (const auto& c : db->candidates(vkey))
        prior.push_back({schedule::schedule_from_json(json::parse(c.schedule_json)), {c.verified, c.ms}});

    search::SearchFunctions fns;
    fns.why_illegal = [&](const schedule::Schedule& s) { return schedule::why_illegal(vg, s, t); };
    fns.predicted_seconds = [&](const schedule::Schedule& s) { return schedule::predicted_seconds(vg, s, t); };
    fns.evaluate = [&](const std::vector<schedule::Schedule>& batch) {
      std::vector<std::string> sources(batch.size());
      std::vector<runtime::Measurement> ms(batch.size());
      std::vector<codegen::KernelSource> fresh;
      std::vector<size_t> fresh_of;
      for (size_t i = 0; i < batch.size(); ++i) {
        try {
          codegen::KernelSource k = codegen::emit_cpu(vg, batch[i], t);
          sources[i] = k.source + '\0' + k.header;
          if (by_source.count(sources[i])) continue;
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
      if (anchor.set()) {
        runtime::Timing now;
        measured = m.measure(fresh, anchor.kernel(), &now);
        anchor.scale(measured, now);
      } else {
        measured = m.measure(fresh);
        std::vector<schedule::Schedule> fresh_schedules;
        for (size_t i : fresh_of) fresh_schedules.push_back(batch[i]);
        anchor.choose(fresh, fresh_schedules, measured, static_cast<int>(chosen[ci]));
      }
      for (size_t f = 0; f < fresh.size(); ++f) by_source[sources[fresh_of[f]]] = measured[f];
      std::vector<search::Evaluation> ev;
      for (size_t i = 0; i < batch.size(); ++i) {
        if (!sources[i].empty()) ms[i] = by_source.at(sources[i]);
        compiled += ms[i].compiled ? 1 : 0;
        if (ms[i].verified) max_err = std::max(max_err, ms[i].max_error_over_budget);
        ev.push_back({ms[i].verified, ms[i].ms});
        if (db) db->record_candidate(vkey, {search::schedule_key(batch[i]), ms[i].ms, ms[i].verified});
        // A candidate axon could not emit, compile or run is axon's own
        // failure: said once per distinct error, and skipped (a candidate
        // over its error budget is an ordinary outcome of the search).
        const std::string& err = ms[i].error;
        if (ms[i].compiled && !ms[i].verified && !sources[i].empty() && rejected.size() < kMaxRejected &&
            rejected_sources.insert(sources[i]).second)
          rejected.push_back({{"variant", static_cast<int>(chosen[ci])}, {"schedule", schedule::to_json(batch[i])},
                              {"error", err}});
        bool broken = !ms[i].verified && !err.empty() && (!ms[i].compiled || err.rfind("load", 0) == 0);
        if (broken && candidate_errors.insert(err).second)
          warn("a candidate failed (" + err + "), schedule " + schedule::to_json(batch[i]).dump() + "; skipped");
      }
      return ev;
    };
    fns.on_trial = [&](const search::Trial& tr, const search::Trial*) {
      ++progress.tried;
      progress.compiled = compiled;
      progress.verified += tr.eval.ok ? 1 : 0;
      if (tr.eval.ok && (best_ms == 0 || tr.eval.ms < best_ms)) best_ms = tr.eval.ms;
      if (best_ms > 0) progress.best_ms = best_ms;
      report_progress();
    };

    search::SearchOptions so;
    // An even share of what is left; time a search leaves unused goes to the next.
    so.budget_s = std::max(0.0, left_s) / static_cast<double>(left_searches);
    so.trials = opts.trials > 0
                    ? std::max(1, static_cast<int>((opts.trials - trials_used + left_searches - 1) / left_searches))
                    : 0;
    so.seed = opts.seed;
    so.prior = prior;
    so.interrupt = opts.interrupt;
    v.budget_s = so.budget_s;
    v.trials = so.trials;
    v.prior = static_cast<int>(prior.size());
    try {
      v.sr = search::autotune(v.space, fns, so);
      v.searched = true;
      trials_used += static_cast<int>(v.sr.history.size());
    } catch (const std::exception& e) {
      v.sr = {};
      v.why_not = "its search failed: " + first_line(e.what());
      warn(std::string("the search of ") + (original ? "the original graph" : "a rewritten variant") + " failed (" +
           first_line(e.what()) + "); skipped");
    }
  }

  // The winner over all variants; the naive kernel of the original when nothing beat it.
  int win = -1;
  for (size_t i = 0; i < vs.size(); ++i)
    if (vs[i].searched && vs[i].sr.found && (win < 0 || vs[i].sr.best.eval.ms < vs[win].sr.best.eval.ms))
      win = static_cast<int>(i);
  schedule::Schedule win_schedule;
  double win_ms = 0;
  if (win >= 0) win_schedule = vs[win].sr.best.schedule, win_ms = vs[win].sr.best.eval.ms;
  json final_round = final_round_json({}, 0);
  if (win >= 0 && !interrupted()) {
    std::vector<Finalist> fs;
    try {
      fs = finalists(vs, t);
    } catch (const std::exception& e) {
      warn("the final round could not be set up (" + first_line(e.what()) + "); the search's fastest wins");
    }
    if (fs.size() >= 2) {
      std::vector<codegen::KernelSource> ks;
      for (const Finalist& f : fs) ks.push_back(f.kernel);
      std::vector<runtime::Timing> tm = m.time_side_by_side(ks);
      for (size_t i = 0; i < fs.size(); ++i) fs[i].final_ms = tm[i].reps > 0 ? tm[i].median_ms : 0;
      int best = -1;
      for (size_t i = 0; i < fs.size(); ++i)
        if (fs[i].final_ms > 0 && (best < 0 || fs[i].final_ms < fs[static_cast<size_t>(best)].final_ms)) best = static_cast<int>(i);
      if (best >= 0) {
        const Finalist& f = fs[static_cast<size_t>(best)];
        win = f.variant, win_schedule = f.schedule, win_ms = f.final_ms;
      }
      final_round = final_round_json(fs, best);
    }
  }
  codegen::KernelSource win_kernel;
  if (win >= 0) {
    try {
      win_kernel = codegen::emit_cpu(vs[win].graph, win_schedule, t);
    } catch (const std::exception& e) {  // it emitted during the search: not expected
      warn("the winning schedule could not be emitted again (" + first_line(e.what()) + ")");
      win = -1;
    }
  }
  bool naive_wins = naive.verified && (win < 0 || naive.ms <= win_ms);
  res.found = naive_wins || win >= 0;
  res.naive_ms = naive_ms;
  const Variant* wv = naive_wins || win < 0 ? &vs[0] : &vs[win];
  if (naive_wins) {
    res.kernel = naive_k;
    res.schedule = schedule::default_schedule(space);
    res.axon_ms = naive.ms;
  } else if (win >= 0) {
    res.kernel = win_kernel;
    res.schedule = win_schedule;
    res.axon_ms = win_ms;
  } else {
    res.schedule = schedule::default_schedule(space);
  }
  // Why the search as a whole stopped: interrupted, else the trials or the
  // budget if any search ran into them, else every space was exhausted.
  std::string stop;
  size_t candidates = 0, prior_total = 0;
  int verified = 0;
  for (const Variant& v : vs) {
    if (!v.searched) continue;
    candidates += v.sr.history.size();
    prior_total += static_cast<size_t>(v.prior);
    for (const auto& h : v.sr.history) verified += h.eval.ok ? 1 : 0;
  }
  auto any_stop = [&](const char* why) {
    return std::any_of(vs.begin(), vs.end(), [&](const Variant& v) { return v.searched && v.sr.stop_reason == why; });
  };
  if (interrupted() || any_stop("interrupted")) stop = "interrupted";
  else if (opts.trials > 0 && trials_used >= opts.trials) stop = "trials";
  else if (any_stop("budget") || any_stop("trials")) stop = any_stop("budget") ? "budget" : "trials";
  else stop = vs[0].sr.stop_reason.empty() ? "space exhausted" : vs[0].sr.stop_reason;
  res.stop_reason = stop;

  for (size_t i = 0; i < vs.size(); ++i) {
    const Variant& v = vs[i];
    json s = {{"steps", steps_kinds(v)}, {"hash", hex16(v.graph.structural_hash())}, {"cost", cost_json(v.cost)},
              {"space_points", v.space.size()}, {"space_knobs", v.space.knobs.size()},
              {"predicted_ms", v.predicted_s * 1e3}};
    if (v.space.knobs.empty()) s["space_points"] = 0;
    if (!v.searched) {
      s["why_not"] = v.why_not;
      rw["not_searched"].push_back(s);
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
    s["winner"] = !naive_wins && static_cast<int>(i) == win;
    rw["searched"].push_back(s);
  }
  rw["applied"] = applied_json(g, *wv);
  rw["winner_hash"] = hex16(wv->graph.structural_hash());
  rw["winner_steps"] = json::array();
  for (const auto& st : wv->steps) rw["winner_steps"].push_back(move_json(st.move));
  rw["checked_against"] = "the original graph's float64 reference and error budget";

  json r;
  r["entry"] = g.entry;
  r["target"] = target::to_json(t);
  r["variant"] = naive_wins ? "naive" : res.found ? "schedule" : "none";
  r["time_ms"] = {{"axon", res.axon_ms}, {"naive", res.naive_ms}};
  r["speedup_vs_naive"] = res.axon_ms > 0 ? res.naive_ms / res.axon_ms : 0;
  // The roofline of the work the winner does (its graph, rewritten or not);
  // the spec's own floor beside it when a rewrite changed the work.
  r["roofline"] = roofline_json(wv->graph, t, res.axon_ms);
  if (!wv->steps.empty()) r["roofline"]["spec_floor_ms"] = roofline_json(g, t, res.axon_ms)["floor_ms"];
  r["verification"] = {{"inputs_tried", m.inputs_tried()}, {"max_error_over_budget", max_err},
                       {"reference", "original graph"}, {"naive_within_budget", naive.verified}};
  if (!naive_check.is_null()) r["verification"]["naive_check"] = naive_check;
  r["schedule"] = schedule::to_json(res.schedule);
  {
    // How the kernel was compiled for every timing and check: what a user builds it with.
    std::string cmd = co.cxx;
    for (const std::string& f : flags) cmd += " " + f;
    r["build"] = {{"compiler", co.cxx}, {"compiler_version", runtime::compiler_version(co.cxx)}, {"flags", flags},
                  {"command", cmd + " kernel.cpp -o kernel.so"}};
  }
  r["space"] = {{"knobs", wv->space.knobs.size()}, {"points", wv->space.size()}};
  r["rewrites"] = rw;
  r["search"] = {{"candidates", candidates}, {"compiled", compiled}, {"verified", verified},
                 {"seconds", elapsed()}, {"stop_reason", stop}, {"seed", opts.seed},
                 {"resumed_from", prior_total}, {"anchor", anchor.to_json()}, {"final_round", final_round},
                 {"rejected", rejected}};
  if (!res.found) {
    // Nothing passed. When nothing was even built there is nothing to
    // report on the spec: that is axon's own failure.
    if (!naive.compiled && compiled == 0)
      throw InternalError("no kernel could be built for this graph: the naive kernel: " + naive.error + "; " +
                          std::to_string(candidates) + " scheduled candidate(s), none compiled");
    res.failure = "no kernel passed its error-budget check: ";
    if (naive_worst)
      res.failure += "the naive kernel misses it at " + describe(*naive_worst);
    else
      res.failure += "the naive kernel: " + (naive.error.empty() ? std::string("not built") : naive.error);
    res.failure += "; and none of the " + std::to_string(candidates) + " scheduled candidate(s) passed";
    r["failure"] = res.failure;
  }
  r["warnings"] = res.warnings;
  if (db) {
    r["search"]["database"] = db->path();
    if (stop != "interrupted" && res.found) db->store_report(report_key, r.dump());
  }
  res.report = r;
  return res;
}

std::string report_markdown(const json& r) {
  std::ostringstream o;
  auto num = [](const json& j, const char* k) { return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0; };
  o << "# axon optimize: " << r.value("entry", std::string("?")) << "\n\n";
  if (r.contains("spec")) o << "- spec: `" << r["spec"].get<std::string>() << "`\n";
  o << "- target: " << r["target"].value("name", std::string("?")) << "\n";
  o << "- kernel: " << r.value("variant", std::string("?")) << ", schedule `" << r["schedule"].dump() << "`\n";
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
