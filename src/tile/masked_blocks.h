// masked_blocks: which key blocks of an attention's score are wholly
// masked, read from the score itself, so that the lowering can leave them
// out (a causal mask halves the work).
//
/// A score is recognised as masked when it is where(cond, -inf, x) or
/// where(cond, x, -inf) (any casts, reshapes and broadcasts of a single
/// element around them) and cond, or its negation, is a comparison of two
/// integer affine functions of the query row i and the key j: iotas,
/// literals, + and -, and * by an integer literal, as np.triu / np.tril
/// with any offset k lower to. Anything else is not recognised (nullopt),
/// and the lowering computes every block.
///
/// Ensures: when the result M is returned, score(i, j) is -inf for every
/// (i, j) with M.a_i i + M.a_j j + M.c >= 0, whatever the other inputs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "tile/value.h"

namespace axon::tile {

struct AffineMask {
  int64_t a_i = 0, a_j = 0, c = 0;  // masked where a_i i + a_j j + c >= 0
};

/// `score` evaluated at query row Index::var(i) and key Index::var(j);
/// `ranges` bound every index variable in it (tile::simplify reads them to
/// see through a reshape's flatten and unflatten).
std::optional<AffineMask> affine_mask(const Value& score, const std::string& i, const std::string& j,
                                      const std::map<std::string, Interval>& ranges);

/// The number of leading key blocks of `bk` keys that a block of `bq` query
/// rows starting at row qb * bq must compute, as an Index in qb, for a mask
/// that grows with the key (a_j > 0) and does not shrink with the row
/// (a_i <= 0): min(blocks, ceil((-a_i (qb bq + bq - 1) - c) / (a_j bk))),
/// never negative. nullopt for other masks, where every block is computed.
std::optional<Index> key_blocks_needed(const AffineMask& m, const Index& qb, int64_t bq, int64_t bk, int64_t blocks);

/// The number of leading key blocks in which the same mask hides no score
/// at all, for the block of query rows starting at qb * bq, as an Index in
/// qb: min(blocks, ceil((-a_i qb bq - a_j (bk - 1) - c) / (a_j bk))), never
/// negative. nullopt where key_blocks_needed is, or where that count at
/// qb = 0 would need a division of a negative value.
std::optional<Index> key_blocks_unmasked(const AffineMask& m, const Index& qb, int64_t bq, int64_t bk, int64_t blocks);

/// The number of leading keys of the key block starting at key `key0` (bk
/// keys) that the same mask hides nothing of in query row `row`, as an
/// Index: clamp(ceil((-a_i row - c) / a_j) - key0, 0, bk). The mask grows
/// with the key, so every key of the block after them is masked in that
/// row. nullopt where key_blocks_needed is, or where the ceiling's
/// numerator at row 0 is negative (kept a division of non-negative values).
std::optional<Index> keys_unmasked(const AffineMask& m, const Index& row, const Index& key0, int64_t bk);

/// A masked score (affine_mask recognises it) with its where(cond, -inf, x)
/// replaced by x: its value wherever cond is false, without the mask's
/// comparison (a block key_blocks_unmasked counts). nullopt otherwise.
std::optional<Value> unmasked_score(const Value& score);

}  // namespace axon::tile
