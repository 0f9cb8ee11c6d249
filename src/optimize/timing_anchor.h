// The anchor of a search's timings: one verified kernel timed again in every
// batch beside the candidates, so that times measured minutes apart compare.
//
/// A shared machine does not keep one speed: this one's memory bandwidth
/// moves between two levels (1.7x apart) from minute to minute, and a
/// search that compares a time from a slow minute with one from a fast
/// minute picks by the minute, not by the kernel. So the first kernel of an
/// optimize run that passes its check and is timed becomes the anchor,
/// with its time then (`first_ms`). Every later batch is timed side by
/// side with the anchor (runtime::Measurer::measure with an anchor), and
/// each candidate's times are multiplied by first_ms / (the anchor's time
/// in that batch): every search time reads as a time in the machine's state
/// of the first batch.
///
/// Contract: only verified measurements are scaled; a batch whose anchor
/// was not timed (reps == 0) is left as measured and not counted; the
/// factor is the anchor's median, never a single call. `slowest` and
/// `fastest` are the extremes of (anchor now / first_ms) over the counted
/// batches: how far the machine moved during the search.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/kernel_source.h"
#include "runtime/measure.h"
#include "schedule/schedule.h"

namespace axon::optimize {

class TimingAnchor {
 public:
  bool set() const { return first_ms_ > 0; }
  const codegen::KernelSource& kernel() const { return kernel_; }
  /// Makes the fastest verified, timed measurement of `batch` the anchor
  /// (nothing when none is); `kernels`, `schedules` parallel to `batch`.
  void choose(const std::vector<codegen::KernelSource>& kernels, const std::vector<schedule::Schedule>& schedules,
              const std::vector<runtime::Measurement>& batch, int variant);
  /// Scales the verified measurements of a batch timed beside the anchor.
  void scale(std::vector<runtime::Measurement>& batch, const runtime::Timing& anchor_now);
  double first_ms() const { return first_ms_; }
  int batches() const { return batches_; }
  double slowest() const { return slowest_; }
  double fastest() const { return fastest_; }
  /// The report's search.anchor: the kernel, its first time, the batches
  /// timed beside it and the range of its speed.
  nlohmann::json to_json() const;

 private:
  codegen::KernelSource kernel_;
  schedule::Schedule schedule_;
  int variant_ = 0;
  double first_ms_ = 0;
  int batches_ = 0;
  double slowest_ = 1, fastest_ = 1;
};

}  // namespace axon::optimize
