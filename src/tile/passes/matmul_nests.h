// Pass matmul_nests: the float64 products of two matrices, as lower_graph
// writes them, become blocked loops of Matmul statements, which the C++
// printer computes in register tiles (codegen/c_like/tile_cpp.h, "float64
// register tiles"). For the compiled float64 reference
// (codegen/c_like/reference_cpp.h), whose contractions are most of its time.
//
/// Takes a top-level nest of serial constant loops in either form of a
/// sum-einsum (tile/lower_graph.h) whose value is the product of two Loads:
///  - i-k-j: `for .. { C[o] += A[..] * B[..] }`, C zeroed by the nest
///    before it;
///  - dot product: `for .. { acc = 0; for k { acc += A[..] * B[..] }; C[o] = acc }`
/// when C, A, B and the product are float64, exactly one loop (k) does not
/// index C, and the flat offsets are affine with non-negative coefficients
/// such that one loop j walks C with stride 1 and does not move A, and one
/// loop i moves C and A but not B (the innermost such). The other loops
/// (batches) stay, outermost; inside them:
///
///   for t < ceil(M / R)              [parallel] rows t R .. min(M, t R + R)
///     for jb < ceil(N / NC)          columns jc = jb NC, nb = min(NC, N - jc)
///       for pb < ceil(K / KC)        k from pc = pb KC, kb = min(KC, K - pc)
///         for ib < ceil(rows / MR)   rows t R + ib MR, min(MR, M - that)
///           for jr < ceil(nb / NR)   columns jc + jr NR, min(NR, nb - jr NR)
///             Matmul(C tile, A, B, rows, columns, kb, keep)
///
/// keep is 1 in the i-k-j form (C holds the zeros and then the partial sums)
/// and min(pb, 1) in the dot-product form (its first slice overwrites C).
/// Each element of C is still one serial sum over k in increasing order,
/// from the same start (+0), so the values are the same bits (the printer
/// continues a kept C's chain; its register tiles have no FMA and one lane
/// per element). With threads > 1 and fewer batch iterations than threads,
/// R is a thread's share of the row blocks and the t loop is Parallel (one
/// parallel region per product; each thread reuses every B block over its
/// rows); otherwise R is M, and parallelize later gives the batches to the
/// threads. Loops of one iteration are left out. Other statements are left
/// as they are.
#pragma once

#include <cstdint>

#include "tile/kernel.h"

namespace axon::tile {

/// Register tile (MR x NR) and blocks (KC deep, NC wide) of matmul_nests.
inline constexpr int64_t kMatmulMR = 6, kMatmulNR = 8, kMatmulKC = 256, kMatmulNC = 128;

Kernel matmul_nests(const Kernel& k, int threads);

}  // namespace axon::tile
