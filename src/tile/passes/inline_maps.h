// Pass inline_maps: an elementwise value is recomputed where it is read
// instead of being stored to memory and loaded back (Halide's compute_inline).
//
/// A Memory buffer T is inlined when its only write is one Store at the
/// bottom of a perfect nest of serial loops that covers T exactly once
/// (each dimension indexed by its own loop variable, or 0 for a unit
/// dimension), it is read only by Loads (not by Copy or Matmul views), and
/// the recomputation is cheap: its expression has no transcendental or
/// division, or T is read by one Load in one statement that runs at most
/// once per element of T. Every Load of T then becomes T's expression with
/// the producer's loop variables replaced by the Load's indices; the
/// producer nest, T's Alloc and its Free go away, and the Frees of the
/// buffers the expression reads move after their new last use. Repeats
/// until nothing more is inlined. Values do not change: the same expression
/// is evaluated on the same operands.
///
/// With `reused` false, a T that some statement reads more often than T has
/// elements (an operand of a contraction, read once per output element) is
/// kept in memory even when cheap: stored once in T's own layout, it is read
/// along its last axis instead of through the producer's strides (a
/// transposed operand), and its expression is evaluated once per element.
#pragma once

#include "tile/kernel.h"

namespace axon::tile {

Kernel inline_maps(const Kernel& k, bool reused = true);

}  // namespace axon::tile
