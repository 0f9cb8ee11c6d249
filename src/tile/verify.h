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

/// Throws InternalError naming `what` ("the GEMM's tile program") and the
/// first problem when verify(k) finds any: a lowering that builds an
/// ill-formed program is a bug in axon, never the user's.
void require_well_formed(const Kernel& k, const std::string& what);

}  // namespace axon::tile
