// The battery: which inputs the gate feeds a kernel, in which calls, and the
// float64 references those calls are judged against.
//
// Input sets, all drawn from the seed (verify::random_inputs):
//   0 normal        A, the set most checks compare against
//   1 normal#2      B, a second draw of the same distribution
//   2..6            shifted_mean, wide_range, large, ties, tiny
//   7 small         normal * 1e-4: mean squares far below the epsilons of
//                   normalisations, which exposes a misplaced epsilon
//   8 large_mean    normal + 1000: a mean far above the spread, which
//                   exposes cancelling one-pass variance formulas
//   9..             one per parameter p: A with p's values taken from B
//                   ("normal with p from normal#2"), to see each input matter
// Output fills (protocol.h): poison (0xFF), nan (NaNs with random payloads,
// random bits for integer outputs), zeros, random (finite values),
// outputs of normal#2 / outputs of normal (that set's reference in the
// output's dtype: right answers, for other inputs), untouched (fresh heap
// buffers, never written). Which call gets which is drawn from the seed.
// Calls (protocol.h layouts; "reuse" refills the previous call's buffers):
//   0  A  after  fresh  poison  the first answer
//   1  B  after  reuse          same addresses, new data: a cache keyed by address shows
//   2  A  after  fresh          fresh addresses after B: state left behind shows
//   3  A  after  reuse          the identical call again: must agree bit for bit
//   4  A  before fresh          underrun guard
//   5.. one per other distribution, after, fresh
//   then A once with every fill (the untouched one on the heap),
//   then one per mixed set, after, fresh, poison
// Then the slots (A, B and two other distributions, each in its own
// buffers), their baselines, concurrent rounds on A's and B's slots, the
// soak (1050 to 1299 calls over the slots, a quarter with drawn fills and
// the rest with the outputs the slot's previous call left, ten of them
// recorded at drawn positions, the last few past the thousandth call; its
// filled calls are the timing) and a last recorded call. The sanitized
// build makes call 0 only, on the heap.
//
// The user run (user_driver_source.h) calls the kernel on one drawn set in a
// plain process 1050 to 1349 times (fewer past a fifth of the repeat time:
// 1 s by default), beside the optimised build's battery.
#pragma once

#include <atomic>
#include <cstdint>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gate/gate.h"
#include "gate/protocol.h"
#include "runtime/compiled_reference.h"
#include "verify/inputs.h"
#include "verify/interpreter.h"

namespace axon::gate {

struct BatterySet {
  std::string name;
  std::string distribution;  // verify::distribution_name, "small" or "large_mean"
  uint64_t seed = 0;
  int varied_param = -1;  // mixed sets: the parameter taken from B
  bool compared = false;  // judged against the reference (not the mixed sets)
  std::vector<ir::Tensor> inputs;  // empty for the mixed sets: A's, with B's varied_param
  std::vector<int> blocks;         // plan block of each parameter
};

/// Call indices of the fixed part of the battery.
namespace call {
inline constexpr int kFirst = 0, kOtherData = 1, kAfterOther = 2, kRepeat = 3, kUnderrun = 4, kDistributions = 5;
}

/// The optimised plan's fills, by index.
namespace fill {
inline constexpr int kPoison = 0, kNan = 1, kZeros = 2, kRandom = 3, kOutputsOfB = 4, kOutputsOfA = 5,
                     kUntouched = 6, kKept = 7;
}

/// The plain process's run: `calls` calls on `set` (fewer if they take
/// longer than max_ms in all).
struct UserPlan {
  int set = 0;
  int calls = 1050;
  double max_ms = 1000;
};

struct Battery {
  std::vector<BatterySet> sets;
  DriverPlan plan;            // the optimised build's calls and timing
  DriverPlan sanitized_plan;  // one call on set 0
  DriverPlan race_plan;       // the slots of A and B and a few concurrent rounds (ThreadSanitizer's build)
  UserPlan user;
};

/// Draws the sets, the fills, the call indices and the user run from `seed`
/// and lays out the plans. The fills that hold other sets' references are
/// empty until fill_reference_outputs. The sets are drawn on this thread,
/// and also on a second one from the moment `second_core` is ready (when
/// given: the build beside the plan has ended); each set's values depend
/// only on the seed, not on which thread drew it.
/// The bytes of a kernel buffer of type `t` (at least one element's: the
/// driver maps a zero-size buffer as one element).
int64_t buffer_bytes(const ir::Type& t);

Battery plan_battery(const ir::Graph& g, uint64_t seed, bool time_kernel,
                     const std::shared_future<void>* second_core = nullptr);

/// The float64 reference and error bounds of each set, computed on demand;
/// thread-safe, each set computed at most once.
class References {
 public:
  /// `threads_per_set`: the compiled twin's threads for one set (<= 0: the
  /// machine's cores).
  References(const ir::Graph& g, const Battery& b, int threads_per_set = 0);
  /// Computes the sets in `which`, up to `threads` sets at once; after
  /// stop(), starts no further set.
  void compute(const std::vector<int>& which, int threads);
  void stop() { stopped_ = true; }
  const std::vector<ir::Tensor>& reference(int set);
  const std::vector<ir::Tensor>& bounds(int set);
  /// Whether the references come from the compiled float64 twin
  /// (runtime/compiled_reference.h) rather than the interpreter.
  bool compiled() const { return eval_.path() == runtime::ReferenceEvaluator::Path::Compiled; }

 private:
  struct Entry {
    std::once_flag once;
    std::vector<ir::Tensor> ref, bound;
  };
  void ensure(int set);
  const ir::Graph& g_;
  const Battery& b_;
  std::vector<Entry> entries_;
  runtime::ReferenceEvaluator eval_;
  std::atomic<bool> stopped_{false};
};

/// Writes the references of sets 0 and 1 into the fills that hold them.
void fill_reference_outputs(const ir::Graph& g, Battery& b, References& refs);

/// One InputSet per battery set, with the hashes (fast_fingerprint) of its buffers.
std::vector<InputSet> describe_inputs(const Battery& b);

}  // namespace axon::gate
