#include "runtime/time_calls.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace axon::runtime {

Timing timing_of(std::vector<double> ms) {
  Timing t;
  t.reps = static_cast<int>(ms.size());
  if (ms.empty()) return t;
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  t.median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  t.min_ms = ms.front();
  t.max_ms = ms.back();
  return t;
}

Timing time_calls(const std::function<void()>& fn, int warmup, int min_reps, double min_seconds) {
  using Clock = std::chrono::steady_clock;
  constexpr int kMaxReps = 1000000;
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ms;
  double total_s = 0;
  while ((static_cast<int>(ms.size()) < min_reps || total_s < min_seconds) && static_cast<int>(ms.size()) < kMaxReps) {
    Clock::time_point t0 = Clock::now();
    fn();
    std::chrono::duration<double> d = Clock::now() - t0;
    ms.push_back(d.count() * 1e3);
    total_s += d.count();
  }
  return timing_of(std::move(ms));
}

}  // namespace axon::runtime
