// Pass interchange_sums: a reduction whose summed axis is strided in memory,
// nested in loops over kept axes of which the innermost is contiguous,
// accumulates in place with the reduction loops outside, so that its
// innermost loop walks contiguous elements and vectorises across the kept
// axis (one accumulator per lane). The channel sum of an NCHW RMSNorm,
// sum over c of x[n, c, h, w], is the case: before, each (h, w) walked the
// channels H*W elements apart; after, each channel row is read contiguously.
//
/// A perfect nest of serial loops K1..Kk (constant extents) whose innermost
/// body is a fold: Allocs, Stores and Accumulates of Register scalars (the
/// accumulators, a sum's blocks from cascade_sums included), serial loops
/// over reduction variables around them, and one Store T[o] = f(acc) at its
/// top level, e.g.
///     alloc acc; acc = 0; for r { acc += v };  T[o] = acc
/// becomes the same fold with the kept loops moved inside every leaf and each
/// accumulator a Scratch array over K1..Kk:
///     acc_lanes[K] = 0 (over K);  for r { acc_lanes[K] += v (over K) };  T[o] = acc_lanes[K] (over K)
/// It applies when: every accumulator has T's dtype, F32 or F64, and the
/// arrays fit 64 KB each (the printer's stack scratch); o is one index per
/// dimension of T, each a constant, terms of outer variables only, or a Ki's
/// variable plus terms of outer variables, every Ki's variable used once
/// in all of o (distinct iterations own
/// distinct elements); no value reads T; and some load has Kk's variable
/// with coefficient 1 in its last index while no load has a reduction
/// variable in its last index (the innermost loop of each leaf then walks
/// memory with unit stride). A single kept loop too long for the arrays is
/// strip-mined first: `for ib { for ii < B { ... v = ib*B + ii } }` with B
/// the largest divisor of its extent in [256, 16 KB of elements], and each
/// block interchanged (the block loop is then parallelize's: its blocks
/// write disjoint elements). Each element still combines the same terms in
/// the same order and the same blocks, so the values do not change. A
/// Parallel loop ends the nest (its iterations stay on their threads). Run
/// after cascade_sums, before vectorize; before parallelize when reductions
/// are split (parallel_sums), after it otherwise.
#pragma once

#include "tile/kernel.h"

namespace axon::tile {

Kernel interchange_sums(const Kernel& k);

// Whether interchange_sums would take the nest rooted at the loop `nest` of
// `k` on its own. fuse_loops keeps such a nest apart: its loop walks the
// columns of what it sums, and fused with another loop the nest would no
// longer be a fold, so its sum would stay strided.
bool interchanges(const Kernel& k, const Stmt& nest);

}  // namespace axon::tile
