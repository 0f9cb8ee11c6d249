// Pass fuse_loops: adjacent top-level loops over the same rows become one
// loop (Halide's compute_at at the outermost level), so that a row's values
// are produced and consumed while they are in cache.
//
/// Two serial top-level loops of the same constant extent, with only Alloc,
/// Free and Comment statements between them, are fused (the second's body
/// after the first's, in one iteration) when every buffer one of them
/// writes and the other touches is indexed, in both, by the loop variable
/// in one same dimension (the first, `t[i, j]`, or another, `t[0, i, 0, 0]`
/// of a statistic kept with keepdims): then iteration i of the second loop
/// only reads what iteration i of the first wrote, and fusing keeps every
/// value. The
/// Allocs between them move before the fused loop and the Frees after it.
/// A loop that interchange_sums would take alone (a sum down the columns of
/// its input, `for j { acc = 0; for i { acc += x[i, j] }; t[j] = acc }`) is
/// never fused: its iterations are columns, not rows, and inside a fused
/// loop it would stay a strided sum instead of per-lane sums along the rows
/// (`np.sum(A, 0)` beside `np.sum(B, 1)`, the rewritten `np.sum(A @ B)`).
/// Unless its loop is a batch of such sums whose body interchange_sums
/// takes alone (`for n { for j { acc = 0; for c { acc += x[n, c, j] } ... } }`,
/// an L2 norm over the channels of [N, C, L]): then it fuses, and the sum
/// inside the fused loop still becomes lane sums, one batch at a time.
/// Repeats while anything fuses.
#pragma once

#include "tile/kernel.h"

namespace axon::tile {

Kernel fuse_loops(const Kernel& k);

}  // namespace axon::tile
