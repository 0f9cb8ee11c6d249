// lower_gemm: one (batched) float32 matrix product as a tile-IR kernel in
// the BLIS form: packed panels, register tiles, edges cut by min().
//
/// The program (docs/tile_ir.md, "The GEMM as a tile program"):
///
///   for b < batch                          [parallel when batches feed every thread]
///     for jb < ceil(N / nc)                 [parallel with split_n]  jc = jb nc, nb = min(nc, N - jc)
///       for pb < ceil(K / kc)               pc = pb kc, kb = min(kc, K - pc)
///         for jp < ceil(nb / nr)            [parallel with ranges of rows]  pack B[pc.., jc + jp nr..] into
///                                           Bpack panel jp (kb x nr, zero padded)
///         for t < threads                   [parallel: ranges of rows]  rows [t R, min(M, t R + R))
///           for ib                          ic, mb = min(mc, rows left)
///             for ip  pack A[ic + ip mr.., pc..] into Apack panel ip (mr x kb, zero padded)
///             for ir < ceil(mb / mr)        A panel outer: it stays in L1
///               for jr < ceil(nb / nr)
///                 matmul C[ic + ir mr.., jc + jr nr..] (keep: pb > 0) =
///                        Apack[ir] . Bpack[jr]   (min(mr, ..) x min(nr, ..) x kb)
///
/// On threads, when the batches do not feed them all, either each takes a
/// range of rows of C (split_n 0: B's panels packed by all, two barriers
/// per K slice) or whole column blocks (split_n 1: each thread packs its
/// own B block into its own scratch and runs every K slice of it with no
/// barrier; A is read by all, once per column block as with rows). Column
/// blocks are taken only where tile::verify shows them disjoint: N a
/// multiple of the block and C's rows contiguous; otherwise ranges of rows.
///
/// An operand read in place (pack_a / pack_b false) is a view of the input
/// with its own strides; A in place still packs the one panel an edge of M
/// cuts, so that every tile the printer computes in full reads only memory
/// of its buffers. The Matmul statements are what a printer turns into
/// register-tiled micro-kernels (codegen/c_like/tile_cpp.h).
///
/// A paired epilogue (GemmEpilogue::paired: a second product A . B2 over
/// the same A, B2 with B's strides, both read by the epilogue, as a gated
/// MLP's silu(X W1) * (X W3)) is lowered one of two ways (GemmSchedule::pair):
///  - pair 1, one shared A panel: each packed B panel holds nr/2 columns of
///    B2 then the same nr/2 columns of B, so that one Matmul per register
///    tile computes both products from the same A broadcasts, into `Cpair`,
///    a memory block [M, nc] holding the two halves side by side per panel;
///    after the last K slice the epilogue reads a tile's two halves while
///    they are in L1 and stores its nr/2 columns of C once (nc counts the
///    columns of both products: a block is nc/2 columns of C);
///  - pair 0, the products apart: A . B2 whole into a memory buffer T of
///    C's layout, then A . B with the epilogue reading T at the element.
///
/// Requires: s legal for g (codegen/cpu/gemm.h gemm_why_illegal).
/// Ensures: indices folded for the shape (tile/passes/fold_indices.h);
/// buffers 0 and 1 are the Inputs A and B (params 0, 1) and
/// buffer 2 the Output C (output 0), each a flat array as long as the
/// strides reach; an epilogue's inputs follow as buffers 3.. (params 2..),
/// after B2 (buffer 3, param 2) when paired, then a prologue's inputs;
/// tile::verify(kernel) is empty; the interpreter computes C = A . B,
/// C = E(A . B), or C = F(A . B, A . B2), with A and B as the prologue
/// gives them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tile/kernel.h"

namespace axon::tile {

/// C[b][m][n] = sum_k A[b][m][k] * B[b][k][n],
/// float32 throughout. Strides are in elements; dense row-major is
/// a_m = K, a_k = 1, b_k = N, b_n = 1, c_m = N, c_n = 1 (a transposed operand
/// swaps its two inner strides). A batch stride of 0 means the operand is
/// shared by all batches (broadcast); c_batch must not be 0 when batch > 1.
struct GemmShape {
  int64_t batch = 1, M = 1, N = 1, K = 1;
  int64_t a_batch = 0, a_m = 1, a_k = 1;
  int64_t b_batch = 0, b_k = 1, b_n = 1;
  int64_t c_batch = 0, c_m = 1, c_n = 1;
};

/// How the product is blocked: the schedule knobs of codegen/cpu/gemm.h.
struct GemmSchedule {
  int mr = 6;         // rows of the register tile
  int nr = 64;        // columns of the register tile (a multiple of the vector width W)
  int64_t kc = 256;   // depth of one packed slice of K
  int64_t mc = 96;    // rows of C per thread work item (a multiple of mr)
  int64_t nc = 1024;  // columns of C per packed B block (a multiple of nr)
  int threads = 1;    // OpenMP threads (the caller pins them)
  bool pack_a = true, pack_b = true;  // false: the operand is read in place (default: A with a_k = 1)
  int prefetch = 1;   // 1: software-prefetch the next A panel and the C tile
  int epilogue = 1;   // with an epilogue: 1 on each register tile after its last K slice, 0 one pass over C after
  int pair = 1;       // with a paired epilogue: 1 both products on one A panel (nc counts both), 0 one after the other
  int split_n = 0;    // on threads (batches not on them): 1 whole column blocks per thread, each packing its own B, 0 ranges of rows
  int prologue = 1;   // with an operand prologue: 1 computed as the operand is packed, 0 whole into a buffer first
};

/// E(b, m, n, c, extra): the value the kernel stores at C's element (b, m,
/// n) whose product is c, reading the epilogue's inputs (their buffer ids,
/// in the order of GemmEpilogue::extra) as it needs.
using EpilogueFn = std::function<Value(const Index& b, const Index& m, const Index& n, const Value& c,
                                       const std::vector<int>& extra)>;

/// F(b, m, n, c, c2, extra): a paired epilogue's value at C's element (b, m,
/// n), c the product with B there and c2 the product with B2.
using PairFn = std::function<Value(const Index& b, const Index& m, const Index& n, const Value& c, const Value& c2,
                                   const std::vector<int>& extra)>;

struct GemmEpilogue {
  std::vector<Buffer> extra;  // Inputs, params 2.. in order (3.. when paired)
  EpilogueFn f;
  /// A second product A . B2: B2 is buffer 3 (param 2), B's length and
  /// strides; the kernel stores f2 instead of f.
  bool paired = false;
  PairFn f2;
};

/// P(b, i, j, source, extra): an operand's element (b, i, j) (A's (b, m, k),
/// B's (b, k, n)) computed from its source buffer (the operand's own
/// buffer, A or B, holding a value of the operand's dense layout) and the
/// prologue's inputs (their buffer ids, in the order of
/// GemmPrologue::extra).
using OperandFn = std::function<Value(const Index& b, const Index& i, const Index& j, int source,
                                      const std::vector<int>& extra)>;

/// Operands computed by the kernel (loop/gemm_prologue.h): with `a` (`b`),
/// A (B) is a(b, m, k) (b(b, k, n)) instead of the buffer's element. With
/// GemmSchedule::prologue 1 the function is applied where the operand is
/// packed (that operand must be packed); with 0 the operand is computed
/// whole into a memory buffer of its layout first (one parallel pass) and
/// the product reads that as it would the input. Its inputs are params
/// after the epilogue's. Not with a paired epilogue.
struct GemmPrologue {
  std::vector<Buffer> extra;
  OperandFn a, b;
};

/// `e` null: the plain product; `p` null: the operands as given.
Kernel lower_gemm(const GemmShape& g, const GemmSchedule& s, const std::string& name = "gemm",
                  const GemmEpilogue* e = nullptr, const GemmPrologue* p = nullptr);

}  // namespace axon::tile
