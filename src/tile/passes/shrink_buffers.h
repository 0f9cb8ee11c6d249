// Pass shrink_buffers: a memory buffer used only inside one iteration of a
// top-level loop becomes per-iteration storage: a Scratch row (or a scalar
// Register) allocated in the loop body, instead of a whole tensor in memory.
//
/// A Memory buffer T whose every access is inside one top-level loop L and
/// indexes T's first dimension by L's variable (with T's first extent equal
/// to L's) loses that dimension: its Alloc moves to the start of L's body
/// (Scratch, or Register when nothing is left), its Free goes away, and every
/// access drops the first index. Values do not change: each iteration
/// reads only what it wrote. Run after fuse_loops; a parallel L then gives
/// each thread its own row.
#pragma once

#include "tile/kernel.h"

namespace axon::tile {

Kernel shrink_buffers(const Kernel& k);

}  // namespace axon::tile
