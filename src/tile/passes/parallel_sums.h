// Pass parallel_sums: a sum over a long loop that no outer loop divides
// among threads is split across threads (Halide's rfactor): each iteration
// sums into a private partial, stored in a per-iteration slot, and the
// slots are added in order afterwards.
//
///   for v in [0, n) { ...acc += x... }
/// becomes
///   alloc parts: memory [n]
///   for v in [0, n) parallel { alloc p: register; p = 0; ...p += x...; parts[v] = p }
///   for v in [0, n) serial { acc += parts[v] }
/// Taken for the outermost serial loop, outside every parallel loop, that
/// runs at least kParallelMinPoints innermost iterations and whose only
/// writes to buffers allocated outside it are Sum Accumulates into one
/// scalar Register. The terms are the same; each partial sums one
/// iteration's terms in their old order and the partials are added in
/// iteration order, so with cascade_sums before it the error bound of
/// docs/error_budget.md's table still holds.
#pragma once

#include "tile/kernel.h"

namespace axon::tile {

Kernel parallel_sums(const Kernel& k, int threads);

}  // namespace axon::tile
