// lower_attention: softmax(score(Q . K^T)) . V as one tile-IR kernel that
// never stores the scores: for each query block, the key blocks one after
// another, with an online softmax (a running max and sum per row, and the
// output tile rescaled when the max grows).
//
/// The program (docs/tile_ir.md, "Attention as a tile program"):
///
///   for b < batch                                  [parallel]
///     Kt = K[b]^T                                   (scratch, by key blocks of D x bk: unit-stride B panels;
///                                                    without transpose_k, S[i, j] is a dot product instead;
///                                                    with one query block (bq = M), each key block is packed
///                                                    at the top of its kb step, in cache when read as V)
///     for qb < M / bq
///       m = -inf, l = 0, O = 0                      (scratch, per query row)
///       for kb < N / bk                           (or fewer: the blocks a mask covers
///                                                    wholly are left out, tile/masked_blocks.h;
///                                                    the leading blocks it hides nothing in
///                                                    are a loop of their own without it, the
///                                                    rest a loop km after it, kb = u + km)
///         S = Q[b, qb..] . Kt[:, kb..]              (matmuls on mr x nr register tiles)
///         S2 = Q2[b, qb..] . K2t[:, kb..]           (with a second product: the same, from the same key block)
///         for i < bq
///           mx = max(m[i], max_j X(i, j))           X = score(S): the graph's scale, mask, ...
///           ms = mx, or 0 while mx = -inf      (a row masked so far: exp(-inf) = 0, not NaN)
///           alpha = exp(m[i] - ms)
///           S[i, j] = exp(X(i, j) - ms); sum = sum_j S[i, j]
///           l[i] = l[i] alpha + sum                 (Rescale)
///           O[i, :] *= alpha; m[i] = mx
///         O += S . V[b, kb..]                       (matmuls on register tiles)
///       out[b, qb.., :] = O / l
///
/// With splits > 1 the key blocks of a batch are cut into ranges r, and
/// (b, r) is the parallel loop; each range keeps m, l, O as above over its
/// blocks only and stores them as partials (memory, [batch, ranges, M..]);
/// then per row, over the ranges in order:
///
///       mx = max(m, m_r); ms = mx, or 0 while mx = -inf
///       alpha = exp(m - ms); beta = exp(m_r - ms)
///       l = l alpha + l_r beta; O = O alpha + O_r beta; m = mx     (Rescale)
///       out = O / l
///
/// the online softmax's step with a whole range in place of a key block.
///
/// which equals softmax over the whole row because exp(x - m') = exp(x - m)
/// exp(m - m') and the division by the row sum commutes with the product by
/// V (the online-softmax rewrite). The sums run in a different order than
/// the reference's: the error budget bounds the difference.
///
/// With a prologue (QK-norm, AttentionPrologue below), each query block's
/// rows pass through its row function into a scratch Qn[bq, D] at the top of
/// the block, and each key block's rows into Kn[bk, D] just before they are
/// packed (or, with dot products, before the block's scores): every Q row
/// and every K row is normalised once per query block and per batch (per
/// key range with splits) and the products read Qn and Kn.
///
/// Requires: M % bq == 0, N % bk == 0, bq % mr == 0, bk % nr == 0,
/// Dv % nr == 0, V and the output unit-stride along their last axis.
/// Ensures: buffers 0, 1, 2 are the Inputs Q, K, V (params 0, 1, 2), the
/// `extra` buffers follow as Inputs 3.., then the Output; tile::verify is
/// empty; the interpreter computes softmax(score) . V.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tile/kernel.h"

namespace axon::tile {

/// Element strides of the operands' base buffers and their lengths.
struct AttentionShape {
  int64_t batch = 1, M = 1, N = 1, D = 1, Dv = 1;
  int64_t q_batch = 0, q_m = 0, q_k = 0;  // Q[b][i][d]
  int64_t k_batch = 0, k_n = 0, k_k = 0;  // K[b][j][d]
  int64_t v_batch = 0, v_k = 0, v_n = 0;  // V[b][j][e]
  int64_t o_batch = 0, o_m = 0, o_n = 0;  // out[b][i][e]
  /// A second score product S2 = Q2 . K2^T over D2 (0: none), computed
  /// beside S from the same key block (MLA's rotary part).
  int64_t D2 = 0;
  int64_t q2_batch = 0, q2_m = 0, q2_k = 0;  // Q2[b][i][d]
  int64_t k2_batch = 0, k2_n = 0, k2_k = 0;  // K2[b][j][d]
};

struct AttentionSchedule {
  int64_t bq = 64, bk = 64;  // query and key block rows
  int mr = 4, nr = 64;       // register tile of both products
  int threads = 1;           // over the batch
  /// true: K^T is packed once per batch and the scores are register-tiled
  /// matmuls; false: each score is a vector dot product of a Q row and a K
  /// row (no packing: for few query rows, as in decoding, where packing K
  /// would cost as much as reading it).
  bool transpose_k = true;
  /// Split-KV: each batch's key blocks are cut into `splits` ranges of
  /// ceil(blocks / splits) blocks (fewer ranges when the last would be
  /// empty), each with its own running max, sum and partial output, the
  /// (batch, range) pairs shared by the threads; a combine step then
  /// merges a row's partials with the same rescale the online softmax
  /// uses. 1: no split. Legal for any count >= 1 and any thread count.
  int splits = 1;
  /// Packing K^T in W x W blocks (8 or 16: the printer's in-register
  /// transpose of 256- or 512-bit vectors) where W divides bk and D; 0:
  /// one element at a time.
  int pack_tile = 0;
};

/// The number of key ranges `s.splits` gives for `key_blocks` blocks, and
/// the blocks in each range but the last (*per).
int64_t key_ranges(int64_t key_blocks, int64_t splits, int64_t* per);

/// score(b, i, j, s, extra): the score the softmax takes at (b, i, j) from
/// s, the Value of (Q . K^T)[b, i, j], reading the extra inputs (their
/// buffer ids) as it needs.
using ScoreFn = std::function<Value(const std::vector<Index>& bij, const Value& s, const std::vector<int>& extra)>;
/// The same with the second product's Value s2 (a.D2 > 0).
using ScoreFn2 = std::function<Value(const std::vector<Index>& bij, const Value& s, const Value& s2,
                                     const std::vector<int>& extra)>;

/// A row function applied to each Q (K) row as it is read, in place of the
/// row itself: `q(k, b, row, dst, offset, extra)` returns the statements
/// that store the function of row `row` of batch `b` into dst[offset + d],
/// d < D, adding the registers they need to `k` (tile/row_function.h
/// builds them). Empty: the rows are read as they are. Not with a second
/// score product.
struct AttentionPrologue {
  using RowFn = std::function<Stmt(Kernel* k, const Index& b, const Index& row, int dst, const Index& offset,
                                   const std::vector<int>& extra)>;
  RowFn q, k;
};

Kernel lower_attention(const AttentionShape& a, const AttentionSchedule& s, const std::vector<Buffer>& extra,
                       const ScoreFn& score, const std::string& name = "attention", const AttentionPrologue& pro = {});
/// With a second product (a.D2 > 0): Q2 and K2 are Inputs 3 and 4 (params
/// 3, 4), the extras follow from param 5.
Kernel lower_attention(const AttentionShape& a, const AttentionSchedule& s, const std::vector<Buffer>& extra,
                       const ScoreFn2& score, const std::string& name = "attention", const AttentionPrologue& pro = {});

}  // namespace axon::tile
