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
///     alloc Bpack, Apack             each thread's scratch
///     for jb < ceil(N / NC)          columns jc = jb NC, nb = min(NC, N - jc)
///       for pb < ceil(K / KC)        k from pc = pb KC, kb = min(KC, K - pc)
///         Bpack <- B[pc.., jc..]     kb x nb, as panels of NR columns:
///                                    (k, c) of panel jr at jr KC NR + k NR + c
///         for ib < ceil(rows / MR)   rows i0 = t R + ib MR, min(MR, M - i0)
///           Apack <- A[i0.., pc..]   (r, k) at k MR + r
///           for jr < ceil(nb / NR)   columns jc + jr NR, min(NR, nb - jr NR)
///             Matmul(C tile, Apack, Bpack panel jr, rows, columns, kb, keep)
///
/// (KC and NC cut down to K and to N rounded up to NR when smaller). The
/// packed operands are read contiguously by the register tile: read in
/// place, the rows of B (a row of a 1024-column B is 8 KiB away from the
/// next) fell into a few sets of L1 and L2 and the tiles ran from memory.
/// The copies move values and change no rounding. NC (512) is wide so
/// that each A tile is packed for fewer column blocks: one thread's float64
/// reference of m1_rmsnorm_matmul (three 1024 x 4096 x 1024 products) took
/// 0.75-0.81 s of CPU per input set at NC 512, 0.90-0.92 s at 128 and
/// 0.73-0.79 s at 1024 (the Bpacks of two threads then 4 MiB), against
/// 1.45-1.46 s unpacked (alternating runs, 2-core AVX2 host, load 3).
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

/// Register tile (MR x NR) and blocks (KC deep, NC wide) of matmul_nests:
/// Apack (KC x MR doubles, 12 KiB) and one panel of Bpack (16 KiB) in L1,
/// Bpack (KC x NC, 1 MiB) in L2 and L3.
inline constexpr int64_t kMatmulMR = 6, kMatmulNR = 8, kMatmulKC = 256, kMatmulNC = 512;

Kernel matmul_nests(const Kernel& k, int threads);

}  // namespace axon::tile
