// Pass stream_stores: a kernel's float32 outputs, written lane by lane in
// vector loops, are written past the caches.
//
/// Every Store into a float32 Output buffer inside a Vectorized loop whose
/// flat index moves by 1 with the loop's variable (a row written lane by
/// lane) becomes `streaming`. The C++ printer (codegen/c_like/tile_cpp.h)
/// writes each whole vector of such a Store whose address is aligned to the
/// vector with a non-temporal store (a plain one otherwise, and in the
/// scalar tail) and fences them: each thread once, after its share of the
/// parallel loop holding them, or once at the end of the kernel outside
/// parallel loops. Other Stores, Accumulates and every other buffer are
/// left alone. Values do not change: a streaming store writes the same
/// element. It pays where the outputs do not fit in the last-level cache:
/// their lines are written without being read first and do not evict the
/// inputs (knob `nt_store` of a row stage, docs/tile_ir.md).
#pragma once

#include "tile/kernel.h"

namespace axon::tile {

Kernel stream_stores(const Kernel& k);

}  // namespace axon::tile
