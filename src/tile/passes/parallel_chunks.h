// Pass parallel_chunks: the iterations of each outermost parallel loop are
// dealt to the threads in chunks of a given length, in turn.
//
/// Sets `chunk` on every Parallel loop that no Parallel loop encloses (of a
/// collapsed nest, the outermost: the chunks are then of the collapsed
/// iterations): its iterations go out `chunk` at a time, chunk j to thread
/// j mod threads (OpenMP's schedule(static, chunk)), instead of one even
/// range per thread (chunk 0, which `chunk` <= 0 leaves). Only which
/// thread runs an iteration changes; the verifier's rule for a Parallel
/// loop (its iterations write disjoint elements) holds for any assignment,
/// so values do not change. Rows of unequal cost balance better in small
/// chunks; neighbouring rows on one thread keep the hardware prefetcher on
/// one stream (knob `row_block` of a row stage, docs/tile_ir.md).
#pragma once

#include <cstdint>

#include "tile/kernel.h"

namespace axon::tile {

Kernel parallel_chunks(const Kernel& k, int64_t chunk);

}  // namespace axon::tile
