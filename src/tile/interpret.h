// The reference execution of the tile IR: runs a kernel in float64 with the
// scalar domain of the graph interpreter (ir::Real; rounding only at
// Cast), so every pass can be tested IR in -> IR out by running both sides.
//
/// Parallel loops run their iterations in reverse order and Vectorized ones
/// forwards: a pass that marks a loop parallel when its iterations depend on
/// each other gives a different answer here. Memory, Scratch and Register
/// buffers start as NaN at Alloc, so a read before a write shows in the
/// results. Throws std::runtime_error on an index out of bounds.
#pragma once

#include <vector>

#include "tile/kernel.h"
#include "ir/tensor.h"

namespace axon::tile {

/// `inputs`: one per Input buffer, in param order. Returns one per Output.
std::vector<ir::Tensor> interpret(const Kernel& k, const std::vector<ir::Tensor>& inputs);

}  // namespace axon::tile
