// Moves on contractions that change how much work a graph asks for (used by
// propagate.cpp; rewrite.h lists every move):
//   sum-into-contraction  a sum over an output label of an einsum that only
//                         one operand carries is taken in that operand first:
//                         sum_n (A@B)[m, n] = A @ (sum_n B[k, n]). A label
//                         both operands carry (a batch label) stays outside.
//   reassociate-chain     a tree of einsums, each used once, read as one
//                         contraction of its leaves and re-bracketed in the
//                         order of fewest FLOPs (matrix-chain dynamic
//                         programming over contiguous runs of leaves), at any
//                         rank: (A@B)@v -> A@(B@v).
//   expand-square-of-difference
//                         sum_k (p - q)^2 over broadcast sides as
//                         sum_k p^2 + sum_k q^2 - 2 sum_k p q: pairwise
//                         squared distances through one contraction.
// Internal to src/rewrite/.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "rewrite/rewrite.h"

namespace axon::rewrite::detail {

/// Builds the replacement of one node in the new graph, given the map from
/// old ids to new ones (filled for every earlier node).
using Builder = std::function<ir::NodeId(ir::Graph&, const std::vector<ir::NodeId>&)>;

/// Copies `g` node by node into a fresh graph, building the nodes in
/// `replace` with their functions instead; compacted.
ir::Graph rebuild(const ir::Graph& g, const std::map<ir::NodeId, Builder>& replace);

std::optional<ir::Graph> sum_into_contraction(const ir::Graph& g, const Move& m);
std::optional<ir::Graph> reassociate_chain(const ir::Graph& g, const Move& m);
std::optional<ir::Graph> expand_square(const ir::Graph& g, const Move& m);

/// The candidates of these kinds on the live nodes of `g` (`live[i]`: node i
/// reaches an output); the caller keeps those that apply.
std::vector<Move> contraction_moves(const ir::Graph& g, const std::vector<bool>& live);

}  // namespace axon::rewrite::detail
