// Pass split_concat_reads: a concatenation is read from its pieces where it
// is used, instead of being copied into a buffer of its own first. The loop
// that walks the concatenated axis is split at the pieces' boundaries, and
// each part reads its piece.
//
/// A Memory buffer T written only by top-level copy nests, each a perfect
/// nest of serial loops around one Store T[o] = concat(v) (the lowering of a
/// concat along axis `ax`: o[ax] = x + offset, every other o[d] its loop's
/// variable or 0 on a unit axis) whose offsets and extents along `ax` tile
/// [0, T's extent), is rewritten when every other access of T is a Load
/// whose index along `ax` is the variable of a serial loop around it of
/// constant extent T's extent. Each such loop
///     for r in [0, E) { ... T[.., r, ..] ... }
/// becomes one loop per piece, in order of offset,
///     for r in [0, E_k) { ...[r := r + offset_k]... concat(v_k)[x := ..] ... }
/// with the piece's value substituted for each Load (its loop variables
/// bound to the Load's indices, the piece's own axis to r). The copy nests
/// and T's Alloc and Free are then dropped. Splitting a loop keeps the order
/// of its iterations, so every value, a sum's rounding included, is what it
/// was; the concatenation's copy (a write of T and its second read) is gone
/// (bench/corpus/concat_axis0_mean: the column means of two stacked inputs
/// read each input once). Nothing changes when some access of T is anything
/// else (a view, a store elsewhere, an index along `ax` that is not a whole
/// loop's variable). Run after inline_maps, before fuse_loops.
#pragma once

#include "tile/kernel.h"

namespace axon::tile {

Kernel split_concat_reads(const Kernel& k);

}  // namespace axon::tile
