// The tile IR verifier: what every pass must preserve, checked before any
// code is printed or compiled.
//
///  - every buffer id exists; a Load or write has one index per dimension;
///  - every index is within the buffer's shape for all values the loop
///    variables around it take (interval bounds; a bound that cannot be
///    shown is an error);
///  - every buffer is written before it is read (program order; Inputs are
///    written on entry), Inputs are never written;
///  - scopes: a Memory, Scratch or Register buffer is used only after its
///    Alloc, before its Free, and inside the Seq that holds the Alloc;
///  - a Parallel loop writes disjoint slices: every write inside it to a
///    buffer allocated outside has an affine flat offset c * p + rest with
///    the span of rest below |c|;
///  - a Vectorized loop carries nothing between lanes except a Sum, Max or
///    Min Accumulate into a scalar Register (a vector reduction).
/// Returns the problems found, each a line naming the statement; empty when
/// the kernel is well formed.
#pragma once

#include <string>
#include <vector>

#include "tile/kernel.h"

namespace axon::tile {

std::vector<std::string> verify(const Kernel& k);

}  // namespace axon::tile
