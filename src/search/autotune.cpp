// Enumeration ranked by the cost model, then Metropolis MCMC on measured time; the contract is in autotune.h.
#include "search/autotune.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <set>

namespace axon::search {

using schedule::Schedule;
using schedule::Space;

std::string schedule_key(const Schedule& s) { return schedule::to_json(s).dump(); }

namespace {

// Our own draws from mt19937_64, so results do not depend on the standard
// library's distribution implementations.
struct Rng {
  std::mt19937_64 gen;
  explicit Rng(uint64_t seed) : gen(seed) {}
  uint64_t below(uint64_t n) { return n == 0 ? 0 : gen() % n; }
  double unit() { return static_cast<double>(gen() >> 11) * (1.0 / 9007199254740992.0); }
};

// The kernel a knob belongs to: its name up to the first dot ("k1").
std::string kernel_of(const std::string& knob) { return knob.substr(0, knob.find('.')); }

Schedule point_at(const Space& s, int64_t index) {
  Schedule p;
  for (const auto& k : s.knobs) {
    int64_t n = static_cast<int64_t>(k.values.size());
    p[k.name] = k.values[static_cast<size_t>(index % n)];
    index /= n;
  }
  return p;
}

Schedule random_point(const Space& s, Rng& rng) {
  Schedule p;
  for (const auto& k : s.knobs) p[k.name] = k.values[rng.below(k.values.size())];
  return p;
}

// Changes one or two knobs: to a neighbouring value (70%) or any value.
Schedule propose(const Space& s, const Schedule& cur, Rng& rng) {
  Schedule p = cur;
  int changes = 1 + static_cast<int>(rng.below(2));
  for (int c = 0; c < changes; ++c) {
    const auto& k = s.knobs[rng.below(s.knobs.size())];
    if (k.values.size() < 2) continue;
    auto it = std::find(k.values.begin(), k.values.end(), p[k.name]);
    int64_t i = it == k.values.end() ? 0 : it - k.values.begin();
    int64_t n = static_cast<int64_t>(k.values.size());
    if (rng.unit() < 0.7) {
      i += rng.below(2) ? 1 : -1;
      i = std::clamp<int64_t>(i, 0, n - 1);
    } else {
      i = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
    }
    p[k.name] = k.values[static_cast<size_t>(i)];
  }
  return p;
}

}  // namespace

SearchResult autotune(const Space& space, const SearchFunctions& fns, const SearchOptions& opts) {
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  SearchResult r;
  Rng rng(opts.seed);
  std::map<std::string, Evaluation> seen;  // every point measured (prior and this run)
  std::set<std::string> illegal;
  bool have_best = false;
  auto consider_best = [&](const Trial& t) {
    if (t.eval.ok && (!have_best || t.eval.ms < r.best.eval.ms)) {
      r.best = t;
      have_best = true;
    }
  };
  for (const Trial& t : opts.prior) {
    seen[schedule_key(t.schedule)] = t.eval;
    consider_best(t);
  }
  int evaluated = 0;
  auto stop_reason = [&]() -> std::string {
    if (opts.interrupt && opts.interrupt->load()) return "interrupted";
    if (opts.trials > 0 && evaluated >= opts.trials) return "trials";
    if (elapsed() >= opts.budget_s) return "budget";
    return "";
  };
  // Evaluates the batch (trimmed to the trials left); returns the trials.
  auto run_batch = [&](std::vector<Schedule> batch) {
    if (opts.trials > 0) batch.resize(std::min<size_t>(batch.size(), static_cast<size_t>(opts.trials - evaluated)));
    std::vector<Trial> done;
    if (batch.empty()) return done;
    std::vector<Evaluation> ev = fns.evaluate(batch);
    for (size_t i = 0; i < batch.size(); ++i) {
      Trial t{batch[i], i < ev.size() ? ev[i] : Evaluation{}};
      if (t.eval.ok && !(t.eval.ms > 0) ) t.eval.ms = 1e-9;  // a zero time is still a time
      seen[schedule_key(t.schedule)] = t.eval;
      ++evaluated;
      consider_best(t);
      r.history.push_back(t);
      done.push_back(t);
      if (fns.on_trial) fns.on_trial(t, have_best ? &r.best : nullptr);
    }
    return done;
  };
  auto is_legal = [&](const Schedule& s, const std::string& key) {
    if (illegal.count(key)) return false;
    if (fns.why_illegal && !fns.why_illegal(s).empty()) {
      illegal.insert(key);
      return false;
    }
    return true;
  };

  // Phase 1: rank by the cost model, measure the top few.
  int64_t size = space.size();
  bool enumerable = size <= opts.enumerate_limit;
  struct Ranked {
    double predicted;
    std::string key;
    Schedule s;
  };
  std::vector<Ranked> ranked;
  std::map<std::string, double> listed;  // legal points ranked so far, and their predictions
  // Ranks `s` once; false when illegal, else its prediction in *predicted.
  auto add_candidate = [&](const Schedule& s, double* predicted = nullptr) {
    std::string key = schedule_key(s);
    auto it = listed.find(key);
    if (it == listed.end()) {
      if (!is_legal(s, key)) return false;
      double p = fns.predicted_seconds ? fns.predicted_seconds(s) : 0;
      it = listed.emplace(key, p).first;
      ranked.push_back({p, key, s});
    }
    if (predicted) *predicted = it->second;
    return true;
  };
  add_candidate(schedule::default_schedule(space));
  if (enumerable)
    for (int64_t i = 0; i < size; ++i) add_candidate(point_at(space, i));
  else
    for (int i = 0; i < opts.enumerate_limit; ++i) add_candidate(random_point(space, rng));
  auto by_prediction = [](const Ranked& a, const Ranked& b) {
    return a.predicted != b.predicted ? a.predicted < b.predicted : a.key < b.key;
  };
  std::sort(ranked.begin(), ranked.end(), by_prediction);
  if (!enumerable && fns.predicted_seconds) {
    // A sample can miss the model's favourites where the good region is
    // small and needs two knobs at once (a GEMM's 4x24 register tile on
    // AVX2: one point in 16 of 64 512, and reached from 6x16 only by moving
    // mr and nr together). So each of the sample's top points climbs on the
    // model alone, nothing compiled: to the best legal point that changes one
    // or two knobs of one kernel ("k1.gemm.mr" and "k1.gemm.nr", not "k0.x"
    // and "k1.y": kernels are tiled independently) to any of their values,
    // until none predicts faster. The climbs' points join the ranking.
    std::vector<Schedule> starts;
    for (const Ranked& c : ranked) {
      if (static_cast<int>(starts.size()) >= std::max(1, opts.top_k)) break;
      starts.push_back(c.s);
    }
    int64_t predictions = 0;
    const int64_t kMaxPredictions = opts.model_climb_limit;
    auto predicted = [&](const Schedule& s, double* out) {
      ++predictions;
      return add_candidate(s, out);
    };
    for (Schedule cur : starts) {
      double cur_p = 0;
      add_candidate(cur, &cur_p);
      for (bool moved = true; moved && predictions < kMaxPredictions;) {
        moved = false;
        Schedule best = cur;
        double best_p = cur_p;
        for (size_t i = 0; i < space.knobs.size() && predictions < kMaxPredictions; ++i)
          for (int64_t vi : space.knobs[i].values)
            for (size_t j = i; j < space.knobs.size() && predictions < kMaxPredictions; ++j) {
              if (j != i && kernel_of(space.knobs[j].name) != kernel_of(space.knobs[i].name)) continue;
              for (int64_t vj : j == i ? std::vector<int64_t>{vi} : space.knobs[j].values) {
                // A two-knob move that leaves either knob as it is is a
                // one-knob move, tried where j == i.
                if (j != i && (vi == cur.at(space.knobs[i].name) || vj == cur.at(space.knobs[j].name))) continue;
                Schedule n = cur;
                n[space.knobs[i].name] = vi;
                n[space.knobs[j].name] = vj;
                double p;
                if (n != cur && predicted(n, &p) && p < best_p) best = n, best_p = p, moved = true;
              }
            }
        cur = best, cur_p = best_p;
      }
    }
    std::sort(ranked.begin(), ranked.end(), by_prediction);
  }
  int64_t legal_points = enumerable ? static_cast<int64_t>(ranked.size()) : -1;
  {
    // The default point (every knob's values[0], the generators' own best
    // guess) is always measured, then the model's favourites.
    std::vector<Schedule> top;
    const Schedule dflt = schedule::default_schedule(space);
    const std::string dflt_key = schedule_key(dflt);
    if (std::any_of(ranked.begin(), ranked.end(), [&](const Ranked& r) { return r.key == dflt_key; }) &&
        !seen.count(dflt_key))
      top.push_back(dflt);
    for (const Ranked& c : ranked) {
      if (c.key == dflt_key && !top.empty() && schedule_key(top[0]) == dflt_key) continue;
      if (static_cast<int>(top.size()) >= std::max(1, opts.top_k)) break;
      if (!seen.count(c.key)) top.push_back(c.s);
    }
    // The first batch runs even on a spent budget (only an interrupt stops
    // it): a search that was given no time still reports a measured point.
    size_t i = 0;
    while (i < top.size() && (stop_reason().empty() || (i == 0 && stop_reason() == "budget"))) {
      std::vector<Schedule> b(top.begin() + static_cast<long>(i),
                              top.begin() + static_cast<long>(std::min(top.size(), i + std::max(1, opts.batch))));
      i += b.size();
      run_batch(b);
    }
  }

  // Phase 2: MCMC from the best point so far.
  Trial cur = r.best;
  bool have_cur = have_best;
  if (!have_cur && !ranked.empty()) cur.schedule = ranked.front().s;
  const int kMaxMisses = 500;  // consecutive proposals that were seen or illegal
  std::string reason;
  while ((reason = stop_reason()).empty()) {
    if (legal_points >= 0 && static_cast<int64_t>(seen.size()) >= legal_points) {
      // Every legal point measured (prior points may include illegal ones, harmless).
      bool all = true;
      for (const Ranked& c : ranked) all = all && seen.count(c.key);
      if (all) {
        reason = "space exhausted";
        break;
      }
    }
    std::vector<Schedule> batch;
    std::set<std::string> in_batch;
    int misses = 0;
    while (static_cast<int>(batch.size()) < std::max(1, opts.batch) && misses < kMaxMisses) {
      Schedule p = space.knobs.empty() ? cur.schedule : propose(space, cur.schedule, rng);
      std::string key = schedule_key(p);
      if (seen.count(key) || in_batch.count(key) || !is_legal(p, key)) {
        ++misses;
        continue;
      }
      in_batch.insert(key);
      batch.push_back(p);
    }
    // The chain has measured its whole neighbourhood: restart from an
    // unmeasured point (the best-ranked one when the space was enumerated,
    // else a random one) rather than give up on points not yet tried.
    if (batch.empty()) {
      if (enumerable) {
        for (const Ranked& c : ranked)
          if (!seen.count(c.key)) {
            batch.push_back(c.s);
            break;
          }
      } else {
        for (int i = 0; i < kMaxMisses && batch.empty(); ++i) {
          Schedule p = random_point(space, rng);
          std::string key = schedule_key(p);
          if (!seen.count(key) && is_legal(p, key)) batch.push_back(p);
        }
      }
    }
    if (batch.empty()) {
      reason = "space exhausted";
      break;
    }
    for (const Trial& t : run_batch(batch)) {
      if (!t.eval.ok) continue;
      if (!have_cur) {
        cur = t;
        have_cur = true;
        continue;
      }
      double delta = std::log(t.eval.ms) - std::log(cur.eval.ms);
      if (delta <= 0 || rng.unit() < std::exp(-delta / std::max(1e-9, opts.temperature))) cur = t;
    }
  }
  r.stop_reason = reason;
  r.found = have_best;
  r.seconds = elapsed();
  return r;
}

}  // namespace axon::search
