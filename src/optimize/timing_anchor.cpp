// One kernel timed in every batch, the yardstick of a search's times; the contract is in timing_anchor.h.
#include "optimize/timing_anchor.h"

#include <algorithm>

namespace axon::optimize {

void TimingAnchor::choose(const std::vector<codegen::KernelSource>& kernels,
                          const std::vector<schedule::Schedule>& schedules,
                          const std::vector<runtime::Measurement>& batch, int variant) {
  int best = -1;
  for (size_t i = 0; i < batch.size(); ++i)
    if (batch[i].verified && batch[i].ms > 0 && (best < 0 || batch[i].ms < batch[static_cast<size_t>(best)].ms))
      best = static_cast<int>(i);
  if (best < 0) return;
  kernel_ = kernels.at(static_cast<size_t>(best));
  schedule_ = schedules.at(static_cast<size_t>(best));
  variant_ = variant;
  first_ms_ = batch[static_cast<size_t>(best)].ms;
}

void TimingAnchor::scale(std::vector<runtime::Measurement>& batch, const runtime::Timing& anchor_now) {
  if (!set() || anchor_now.reps == 0 || !(anchor_now.median_ms > 0)) return;
  const double speed = anchor_now.median_ms / first_ms_;  // above 1: the machine is slower now
  slowest_ = batches_ == 0 ? speed : std::max(slowest_, speed);
  fastest_ = batches_ == 0 ? speed : std::min(fastest_, speed);
  ++batches_;
  for (runtime::Measurement& m : batch) {
    if (!m.verified) continue;
    m.ms /= speed;
    m.min_ms /= speed;
    m.max_ms /= speed;
  }
}

nlohmann::json TimingAnchor::to_json() const {
  if (!set()) return {{"set", false}};
  return {{"set", true},
          {"variant", variant_},
          {"schedule", schedule::to_json(schedule_)},
          {"first_ms", first_ms_},
          {"batches", batches_},
          {"slowest", slowest_},
          {"fastest", fastest_},
          {"rule", "every batch after the first timed side by side with this kernel; each candidate's times "
                   "multiplied by first_ms / the anchor's median in its batch"}};
}

}  // namespace axon::optimize
