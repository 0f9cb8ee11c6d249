// Wall-clock timing of repeated calls (docs/architecture.md, "Data
// flow", step 8: warm-up, many repetitions, the median and the spread).
#pragma once

#include <functional>
#include <vector>

namespace axon::runtime {

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int reps = 0;
};

/// The median, min and max of single-call times in milliseconds (the mean of
/// the middle two for an even count); reps is their number, 0 when empty.
Timing timing_of(std::vector<double> call_ms);

/// Runs `fn` `warmup` times untimed, then timed repetitions until there are at
/// least `min_reps` of them and they took at least `min_seconds` in all (or a
/// cap of 1,000,000 repetitions is reached); returns the median, min and max
/// of the single calls, in milliseconds, with steady_clock.
Timing time_calls(const std::function<void()>& fn, int warmup = 2, int min_reps = 5, double min_seconds = 0.2);

}  // namespace axon::runtime
