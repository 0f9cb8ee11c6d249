// Pass parallel_sums: a reduction loop that no parallel loop divides among
// threads is split across threads (Halide's rfactor): each thread folds one
// chunk of its iterations into private partial accumulators, stores them in
// its slot of a small memory buffer, and the slots are combined in order
// afterwards.
//
///   for v in [0, n) { ...acc[j] c= x... }
/// becomes
///   alloc parts: memory [P, shape of acc]
///   for p in [0, P) parallel {
///     alloc part: like acc; part[j] = identity of c (over j)
///     for q in [0, min(chunk, n - p*chunk)) { ...part[j] c= x... (v = p*chunk + q) }
///     parts[p, j] = part[j] (over j)
///   }
///   for p in [0, P) serial { acc[j] c= parts[p, j] (over j) }
/// with P = threads chunks of chunk = ceil(n / P) iterations (fewer where the
/// last would be empty; the q loop is dropped when chunk is 1).
///
/// Taken for every serial loop of constant extent >= 2 outside every
/// parallel loop (run it after parallelize) that runs at least
/// kParallelMinPoints innermost iterations and whose writes to buffers
/// allocated outside it are
///  - Accumulates of one combine (Sum, Max or Min) per target, at indices
///    that do not use v, with values that never read a target (a scalar
///    register from cascade_sums, or interchange_sums' per-lane scratch
///    arrays: a strided reduction's kept extent then stays in each thread's
///    partial), each partial at most 64 KiB; or
///  - writes to Register or Scratch buffers referenced only inside the loop
///    and first written by a Store there (a block's partial sum): each thread
///    gets its own copy.
/// The result is verified; a loop whose split the verifier would refuse is
/// left alone. Max and Min give the same values in any order (NaN included,
/// ir::combine_step). A Sum's terms are the same; each chunk sums its
/// iterations in their old order and the chunks are added in order, so
/// with cascade_sums before it the error bound of docs/error_budget.md
/// still holds (one more level of the tree, shorter runs in the others).
#pragma once

#include "tile/kernel.h"

namespace axon::tile {

Kernel parallel_sums(const Kernel& k, int threads);

}  // namespace axon::tile
