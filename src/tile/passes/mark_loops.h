// Shared by parallelize and vectorize: changes the kind of chosen loops one
// at a time, keeping each change only when the verifier finds no new
// problem (the verifier is the one statement of when a loop kind is legal).
#pragma once

#include <functional>

#include "tile/kernel.h"

namespace axon::tile {

/// For each For statement `f` with choose(f, depth) true (depth 0: a loop
/// of the top-level sequence), in program order: set its kind to `kind`
/// (and `threads`), keep it if verify() finds no more problems than before.
Kernel mark_loops(const Kernel& k, LoopKind kind, int threads,
                  const std::function<bool(const Stmt& loop, int depth)>& choose);

/// The number of innermost iterations a statement runs (constant extents;
/// a non-constant extent counts as its upper bound).
int64_t points(const Stmt& s);

}  // namespace axon::tile
