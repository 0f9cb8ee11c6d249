// fuse_attention_groups: a contraction stage, the row stage that takes the
// softmax of a score of its result, and the contraction stage that
// multiplies those probabilities into V become one Attention stage
// (loop/partition.h), which the code generator lowers without storing the
// scores (tile/lower_attention.h).
//
/// The row stage must compute exactly P = E / sum(E) with E = exp(X -
/// max(X)), both over the last axis, where X is elementwise over S (the
/// first product) and other values (a mask, a bias) and nothing else;
/// S must be read by that row stage alone and P by the second product
/// alone, neither an output of the graph. Shapes: S and P dense [batch, M,
/// N] (rank 3), M a multiple of 4, N and the value width multiples of 64
/// (whole blocks and register tiles on every target), V unit-stride along
/// its last axis. Other graphs are left as they are. An extra that is
/// itself a contraction stage's dense [batch, M, N] result, read by the
/// row stage alone, joins the group as its second score product (qk2).
#pragma once

#include "ir/graph.h"
#include "loop/partition.h"

namespace axon::loop {

void fuse_attention_groups(const ir::Graph& g, Partition* p);

}  // namespace axon::loop
