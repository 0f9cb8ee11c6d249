// optimize: wires the autotuner (search/) to the CPU code generator, the
// measurement harness (runtime/measure) and the tuning database (tuning/).
// The contract is in optimize.h; the report format in docs/optimize.md.
#include "optimize/optimize.h"

#include <chrono>
#include <map>
#include <cstdio>
#include <sstream>

#include "analysis/cost.h"
#include "codegen/c_like/naive_cpp.h"
#include "codegen/cpu/emit_cpu.h"
#include "runtime/compile_shared.h"
#include "runtime/measure.h"
#include "search/autotune.h"
#include "tuning/tuning_db.h"

namespace axon::optimize {

using json = nlohmann::json;

namespace {

std::string graph_key(const ir::Graph& g) {
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(g.structural_hash()));
  std::string k = std::string(hash) + " " + g.entry + "(";
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

// Largest graph (in FLOPs) whose stored winner is re-checked on a database answer.
constexpr double kRecheckFlops = 5e8;

}  // namespace

OptimizeResult optimize(const ir::Graph& g, const OptimizeOptions& opts) {
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  // Before anything (the peak probe included) can load OpenMP.
  runtime::pin_openmp_threads();
  target::Target t = opts.target;
  std::vector<std::string> flags = codegen::cpu_compile_flags(t, true);
  runtime::CompileOptions co;
  tuning::TuningKey key{graph_key(g), t.fingerprint(), runtime::compiler_version(co.cxx)};
  std::unique_ptr<tuning::TuningDb> db;
  if (opts.use_db) db = std::make_unique<tuning::TuningDb>(opts.db_path.empty() ? tuning::default_db_path() : opts.db_path);

  runtime::MeasureOptions mo;
  mo.flags = flags;
  schedule::Space space = schedule::schedule_space(g, t);
  OptimizeResult res;

  // Answer from the database: emit the winner of the stored report again and
  // re-check it once on one input (no timing), so that a stale row cannot
  // hand out a wrong kernel.
  if (db && !opts.resume) {
    auto stored = db->report(key);
    if (stored) {
      json report = json::parse(*stored);
      schedule::Schedule s = schedule::schedule_from_json(report.at("schedule"));
      bool naive = report.value("variant", "") == "naive";
      codegen::KernelSource k = naive ? codegen::emit_naive_cpp(g) : codegen::emit_cpu(g, s, t);
      // The re-check costs one interpreter run; above kRecheckFlops that
      // alone would break the promise of an answer within a second, so the
      // row (verified when stored, same target and compiler) is trusted.
      bool recheck = analysis::graph_cost(g).flops <= kRecheckFlops;
      bool verified = true;
      if (recheck) {
        mo.check_inputs = 1;
        runtime::Measurer m(g, mo);
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
      // Fall through to a fresh search when the stored winner fails now.
    }
  }

  if (t.peaks.fma_gflops_all <= 0 || t.peaks.stream_gbs_all <= 0) target::measure_peaks(t);

  runtime::Measurer m(g, mo);
  Progress progress;
  auto report_progress = [&] {
    progress.elapsed_s = elapsed();
    if (opts.on_progress) opts.on_progress(progress);
  };

  // The naive kernel: the baseline and the fallback winner.
  codegen::KernelSource naive_k = codegen::emit_naive_cpp(g);
  runtime::Measurement naive = m.measure({naive_k}).at(0);
  if (!naive.verified)
    throw InternalError("the naive kernel failed its own check: " + naive.error);
  progress.naive_ms = naive.ms;
  report_progress();

  std::vector<search::Trial> prior;
  if (db && opts.resume)
    for (const auto& c : db->candidates(key))
      prior.push_back({schedule::schedule_from_json(json::parse(c.schedule_json)), {c.verified, c.ms}});

  double max_err = naive.max_error_over_budget;
  search::SearchFunctions fns;
  fns.why_illegal = [&](const schedule::Schedule& s) { return schedule::why_illegal(g, s, t); };
  fns.predicted_seconds = [&](const schedule::Schedule& s) { return schedule::predicted_seconds(g, s, t); };
  int compiled = 0;
  // Two schedules that emit the same source are one binary: measured once
  // (tinygrad's duplicate-binary rule). Keyed by the source text itself.
  std::map<std::string, runtime::Measurement> by_source;
  by_source[naive_k.source + '\0' + naive_k.header] = naive;
  fns.evaluate = [&](const std::vector<schedule::Schedule>& batch) {
    std::vector<std::string> sources(batch.size());
    std::vector<runtime::Measurement> ms(batch.size());
    std::vector<codegen::KernelSource> fresh;
    std::vector<size_t> fresh_of;
    for (size_t i = 0; i < batch.size(); ++i) {
      try {
        codegen::KernelSource k = codegen::emit_cpu(g, batch[i], t);
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
    std::vector<runtime::Measurement> measured = m.measure(fresh);
    for (size_t f = 0; f < fresh.size(); ++f) by_source[sources[fresh_of[f]]] = measured[f];
    std::vector<search::Evaluation> ev;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!sources[i].empty()) ms[i] = by_source.at(sources[i]);
      compiled += ms[i].compiled ? 1 : 0;
      if (ms[i].verified) max_err = std::max(max_err, ms[i].max_error_over_budget);
      ev.push_back({ms[i].verified, ms[i].ms});
      if (db) db->record_candidate(key, {search::schedule_key(batch[i]), ms[i].ms, ms[i].verified});
    }
    return ev;
  };
  fns.on_trial = [&](const search::Trial& tr, const search::Trial* best) {
    ++progress.tried;
    progress.compiled = compiled;
    progress.verified += tr.eval.ok ? 1 : 0;
    if (best) progress.best_ms = best->eval.ms;
    report_progress();
  };

  search::SearchOptions so;
  so.budget_s = opts.budget_s;
  so.trials = opts.trials;
  so.seed = opts.seed;
  so.prior = prior;
  so.interrupt = opts.interrupt;
  search::SearchResult sr = search::autotune(space, fns, so);

  bool naive_wins = !sr.found || naive.ms <= sr.best.eval.ms;
  res.naive_ms = naive.ms;
  if (naive_wins) {
    res.kernel = naive_k;
    res.schedule = schedule::default_schedule(space);
    res.axon_ms = naive.ms;
  } else {
    res.kernel = codegen::emit_cpu(g, sr.best.schedule, t);
    res.schedule = sr.best.schedule;
    res.axon_ms = sr.best.eval.ms;
  }
  res.stop_reason = sr.stop_reason;

  json r;
  r["entry"] = g.entry;
  r["target"] = target::to_json(t);
  r["variant"] = naive_wins ? "naive" : "schedule";
  r["time_ms"] = {{"axon", res.axon_ms}, {"naive", res.naive_ms}};
  r["speedup_vs_naive"] = res.axon_ms > 0 ? res.naive_ms / res.axon_ms : 0;
  r["roofline"] = roofline_json(g, t, res.axon_ms);
  r["verification"] = {{"inputs_tried", m.inputs_tried()}, {"max_error_over_budget", max_err}};
  r["schedule"] = schedule::to_json(res.schedule);
  r["space"] = {{"knobs", space.knobs.size()}, {"points", space.size()}};
  int verified = 0;
  for (const auto& h : sr.history) verified += h.eval.ok ? 1 : 0;
  r["search"] = {{"candidates", sr.history.size()}, {"compiled", compiled}, {"verified", verified},
                 {"seconds", elapsed()}, {"stop_reason", sr.stop_reason}, {"seed", opts.seed},
                 {"resumed_from", prior.size()}};
  if (db) {
    r["search"]["database"] = db->path();
    if (sr.stop_reason != "interrupted") db->store_report(key, r.dump());
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
  o << "- verification: " << r["verification"].value("inputs_tried", 0) << " inputs, max error "
    << num(r["verification"], "max_error_over_budget") << " of the budget\n";
  const json& s = r["search"];
  o << "- search: " << s.value("candidates", 0) << " candidates, " << s.value("compiled", 0) << " compiled, "
    << s.value("verified", 0) << " verified, " << num(s, "seconds") << " s, stopped: "
    << s.value("stop_reason", std::string("?")) << "\n";
  return o.str();
}

}  // namespace axon::optimize
