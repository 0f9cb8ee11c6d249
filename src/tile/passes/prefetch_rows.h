// Pass prefetch_rows: the loop that brings a row in from memory also asks
// for the memory further along, non-temporally, ahead of the hardware
// prefetcher.
//
/// In the body of each top-level loop (the loop over rows), the first
/// Vectorized loop, in program order, that Loads an Input buffer at unit
/// stride along its variable, at an element that also moves with the
/// top-level loop (a row input: a per-column scale stays in cache), gets,
/// for each such Input (its first Load), a Prefetch of the line `ahead`
/// bytes past the loaded element, with the non-temporal hint: the pass reading the row from memory fetches what
/// the next rows need while the later passes of this row compute from
/// cache. A hint only: values do not change. The address may lie past the
/// buffer's end (a prefetch never faults; a clamp cost s7 7% in the row
/// kernel, docs/loop_ir.md "Non-temporal prefetch", where this is the
/// knob `stream_prefetch`).
#pragma once

#include <cstdint>

#include "tile/kernel.h"

namespace axon::tile {

Kernel prefetch_rows(const Kernel& k, int64_t ahead);

}  // namespace axon::tile
