// Pass prefetch_next_rows: while a row's later loops compute from cache,
// one of them fetches the next row's inputs.
//
/// In the body of each top-level loop (the loop over rows, variable r), the
/// passes are the statements of that body (one loop nest each; consecutive
/// ones writing the same buffers outside themselves, as a cascaded sum's
/// blocks and tail do, together) holding a vector loop that Loads a
/// row input (an Input buffer read at unit stride along the vector loop's
/// variable, at an element that moves with r), numbered in program order
/// from 0, the pass that brings the row in from memory. In pass `pass` (the
/// last when there are fewer; none when there is one, or pass <= 0), every
/// such vector loop gets, for each row input it Loads (its first Load), a
/// Prefetch of the same element one row on:
/// `ahead` is r's step in the element's flat offset times the element's
/// size in bytes, `temporal` (into every cache level: the next row's loops
/// read it again). The next row's first loop then finds its row in cache,
/// and memory works while this row computes. A hint only: values do not
/// change; on the last row the address passes the buffer's end (a
/// prefetch never faults). Knob `prefetch_pass` of a row stage
/// (docs/loop_ir.md).
#pragma once

#include "tile/kernel.h"

namespace axon::tile {

Kernel prefetch_next_rows(const Kernel& k, int pass);

}  // namespace axon::tile
