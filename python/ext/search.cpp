#include "search.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <mutex>

#include <nanobind/nanobind.h>

#include "backend/backend.h"
#include "errors.h"
#include "optimize/optimize.h"
#include "target/target.h"

namespace nb = nanobind;

namespace axon::python {

namespace {

// One search at a time owns SIGINT; its flag is what the handler sets.
std::mutex g_sigint_owner;
std::atomic<bool> g_interrupted{false};

extern "C" void on_search_sigint(int) { g_interrupted.store(true); }

// Installs on_search_sigint for its lifetime and puts the previous
// disposition (Python's handler) back afterwards.
class SigintScope {
 public:
  explicit SigintScope(bool active) : active_(active) {
    if (!active_) return;
    g_interrupted.store(false);
    struct sigaction sa {};
    sa.sa_handler = on_search_sigint;
    sigemptyset(&sa.sa_mask);
    active_ = sigaction(SIGINT, &sa, &previous_) == 0;
  }
  ~SigintScope() {
    if (active_) sigaction(SIGINT, &previous_, nullptr);
  }

 private:
  bool active_;
  struct sigaction previous_ {};
};

}  // namespace

SearchResult search(const Program& p, const SearchOptions& so) {
  optimize::OptimizeOptions o;
  o.budget_s = so.budget_s;
  o.trials = so.trials;
  o.seed = so.seed;
  o.db_path = so.db_path;
  o.use_db = so.use_db;
  o.resume = so.resume;
  o.rewrites = so.rewrites;
  SearchResult out;
  std::mutex warnings_mu;
  o.on_warning = [&](const std::string& w) {
    std::lock_guard<std::mutex> lock(warnings_mu);
    out.warnings.push_back(w);
  };
  if (so.progress) {
    o.on_progress = [](const optimize::Progress& pr) {
      double speedup = pr.best_ms > 0 ? pr.naive_ms / pr.best_ms : 0;
      std::fprintf(stderr, "\raxon: tried %d  verified %d  best %.4g ms  speedup %.2fx  (%.0f s)  ", pr.tried,
                   pr.verified, pr.best_ms, speedup, pr.elapsed_s);
      std::fflush(stderr);
    };
  }
  optimize::OptimizeResult r;
  {
    nb::gil_scoped_release unlocked;
    std::unique_lock<std::mutex> owner(g_sigint_owner, std::defer_lock);
    bool catch_sigint = so.catch_sigint && owner.try_lock();
    SigintScope scope(catch_sigint);
    if (catch_sigint) o.interrupt = &g_interrupted;
    o.target = target::resolve_target("", false, false);
    r = optimize::optimize(p.graph, o);
    out.interrupted = catch_sigint && g_interrupted.load();
    out.compile_flags = backend::cpu_backend(o.target)->compile_flags(true);
  }
  if (so.progress) std::fprintf(stderr, "\n");
  if (!r.found) throw VerificationError(r.failure);
  r.report["spec"] = p.path;
  r.report["entry"] = p.graph.entry;
  out.kernel = r.kernel;
  out.report_json = r.report.dump(2);
  out.axon_ms = r.axon_ms;
  out.naive_ms = r.naive_ms;
  out.from_db = r.from_db;
  out.stop_reason = r.stop_reason;
  return out;
}

SearchResult naive(const Program& p) {
  target::Target t = target::resolve_target("", false, false);
  std::unique_ptr<backend::Backend> be = backend::cpu_backend(t);
  SearchResult out;
  out.kernel = be->emit_naive(p.graph);
  out.compile_flags = be->compile_flags(true);
  out.report_json = "{}";
  out.stop_reason = "naive";
  return out;
}

}  // namespace axon::python
