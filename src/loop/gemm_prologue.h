// fuse_gemm_prologues: an operand of a matrix product that a Row or Naive
// stage computes at each element from values it reads (A = X * g; B = W *
// h[:, None]; A = exp(S - max) / sum, a softmax, its row statistics left to
// the row stage) joins the product's stage as a prologue, so the GEMM
// computes each element as it packs the operand (tile/lower_gemm.h) and
// the operand never passes through memory.
//
/// A Contraction or (unpaired) Epilogue stage's A joins when: A's base is a
/// result of an earlier Row or Naive stage, float32, no output of the graph
/// and read by no other stage, and by this one only as A; the product
/// reads it dense as [M, K] (batch 1) or [batch, M, K] (a_k = 1, a_m = K,
/// a_batch = M K); its cone in that stage splits into the nodes computed at
/// each element (no reduction, einsum or concat among them: what
/// tile/inline_value.h computes) over the stage's inputs and `leaves`,
/// values of the stage smaller than A whose cones hold a reduction (a row
/// statistic); and that function reads a float32 input of A's shape (read
/// in place of A, Stage::inputs[0]). Likewise B, dense as [K, N] (batch 1,
/// or shared by the batches) or [batch, K, N]. The stage that computed the
/// operand returns the leaves in its place (rebuilt for its results) or
/// goes when it has none left. Otherwise the stages are left as they are.
#pragma once

#include "ir/graph.h"
#include "loop/partition.h"

namespace axon::loop {

void fuse_gemm_prologues(const ir::Graph& g, Partition* p);

}  // namespace axon::loop
