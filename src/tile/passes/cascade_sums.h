// Pass cascade_sums: long sums become trees of short ones, so that a sum's
// rounding error grows like log n instead of n.
//
/// Takes every perfect loop nest whose innermost statement is a Sum
/// Accumulate into an element that none of the nest's variables index (the
/// accumulator form of a reduction, tile/lower_graph.h), with more than
/// kCascadeBlock terms in all, and rewrites it so that no accumulator ever
/// receives more than kCascadeBlock terms:
///  - each loop of the nest sums into a fresh Register partial of its own,
///    added to its parent's accumulator once per parent iteration;
///  - a loop longer than kCascadeBlock is split into blocks of kCascadeBlock
///    (and a tail block), each summed into a partial, and the loop over
///    blocks is split again while it is longer than kCascadeBlock.
/// The terms and the set of points summed are unchanged; only the order of
/// the additions is. With blocks of B and L levels, the worst-case error is
/// (L (B - 1) + levels of the nest) u sum |t| instead of (n - 1) u sum |t|
/// (docs/error_budget.md). Nests of other shapes are left as they are.
///
/// `leaf_block` (a multiple of kCascadeBlock, default kCascadeBlock) is the
/// length of the blocks of the innermost loop when every Load of the summed
/// value is float32 or bool and unit-stride or invariant along it: the form
/// the C++ printer sums in vector lanes (codegen/c_like/tile_cpp.h), where
/// each of its `leaf_block / kCascadeBlock` lane partials (lanes times
/// accumulator chains) receives at most kCascadeBlock of a block's terms.
/// Outer levels keep blocks of kCascadeBlock.
#pragma once

#include <cstdint>

#include "tile/kernel.h"

namespace axon::tile {

inline constexpr int64_t kCascadeBlock = 64;

Kernel cascade_sums(const Kernel& k, int64_t leaf_block = kCascadeBlock);

}  // namespace axon::tile
