// Pass fold_indices: every index folded with the ranges of the loops around
// it, so that a program built with general edge expressions reads (and
// compiles) as what it is for the shapes at hand.
//
/// - a variable whose loop runs once is 0, and the loop goes (a parallel
///   loop of one iteration runs on one thread anyway); a loop that never
///   runs goes too;
/// - min(a, b) is a when a <= b over the ranges (and b when b <= a);
/// - a / c and a % c with a in [0, c) become 0 and a (tile::simplify).
/// - (c q + r) / c and (c q + r) % c, q and r affine, r in [0, c) over the
///   ranges, become q and r (tile::simplify): an index that a reshape
///   flattened and unflattened reads as the index itself.
/// Applies to loop extents, indices of Load/Store/Accumulate/Rescale/
/// Prefetch and of the Loads and iotas inside values, views, and a
/// Matmul's m, n, k and keep. What values compute does not change.
#pragma once

#include "tile/kernel.h"

namespace axon::tile {

Kernel fold_indices(const Kernel& k);

}  // namespace axon::tile
