// Pass transpose_blocks: an elementwise nest whose innermost loop writes its
// output contiguously but reads an operand across its rows (a transposed
// read, out[i, j] = f(x[j, i])) reads that operand in W x W blocks instead,
// each block copied into a thread's scratch by one Copy (printed as an
// in-register transpose, codegen/cpu/register_transpose.h) and then read
// along its rows, so that both sides walk whole cache lines and the
// innermost loop vectorises.
//
/// Matches a perfect nest of serial loops with constant extents (the chain)
/// whose innermost body holds only Stores, each of whose indices is a
/// distinct chain variable, every chain variable once, the last one the
/// innermost loop's v (each point writes its own elements, contiguous along
/// v), and which reads no buffer it writes. A Load of a buffer X is
/// transposed when its flat index is affine with coefficient c, |c| > 1,
/// along v and 1 along another chain loop u; u is the first such load's,
/// and every Load with coefficient 1 along u and |c| > 1 along v gets a
/// block. Both extents must be at least W. With E_u = q_u W + r_u and E_v =
/// q_v W + r_v, the nest becomes (the other chain loops outermost, in their
/// order):
///     for others { for ub < q_u {
///         for vb < q_v { alloc T: scratch [W, W]
///                        copy T{[W, 1]} = X{at u = ub W, v = vb W; strides [1, c]} [W, W]
///                        for uu < W { for vv < W { body(u = ub W + uu, v = vb W + vv; X[..] -> T[uu, vv]) } } }
///         for uu < W { for vr < r_v { body(u = ub W + uu, v = q_v W + vr) } } }
///       for ur < r_u { for v < E_v { body(u = q_u W + ur) } } }
/// (the remainders only when r > 0). Every point of the nest runs once and
/// writes the same elements with the same expression, reading the same
/// element of X through T: values do not change. Run before parallelize
/// (the outermost loop it leaves is parallelize's) and vectorize.
#pragma once

#include "tile/kernel.h"

namespace axon::tile {

/// `width`: W, the block's side (the register transpose's, 16 with 512-bit
/// vectors, 8 with 256-bit ones); below 2, `k` unchanged.
Kernel transpose_blocks(const Kernel& k, int width);

}  // namespace axon::tile
