// Pass parallelize: the outermost loop of each large top-level nest runs on
// `threads` threads (LoopKind::Parallel).
//
/// A top-level serial loop of extent >= 2 whose nest runs at least
/// kParallelMinPoints innermost iterations is marked Parallel when the
/// verifier (tile/verify.h) can show that its iterations write disjoint
/// elements; otherwise it stays serial. Each iteration runs as before, so
/// the values do not change.
#pragma once

#include <cstdint>

#include "tile/kernel.h"

namespace axon::tile {

inline constexpr int64_t kParallelMinPoints = 1 << 15;

Kernel parallelize(const Kernel& k, int threads);

}  // namespace axon::tile
