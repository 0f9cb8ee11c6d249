// fuse_gemm_prologues: an operand of a matrix product that a Row or Naive
// stage computes elementwise from values it reads (A = X * g, the gain of an
// RMSNorm once its row scale has moved past the product; B = W * s) joins
// the product's stage as a prologue, so the GEMM computes each element as
// it packs the operand (tile/lower_gemm.h) and the operand never passes
// through memory.
//
/// A Contraction or (unpaired) Epilogue stage's A joins when: A's base is a
/// result of an earlier Row or Naive stage, float32, no output of the graph
/// and read by no other stage, and by this one only as A; the product
/// reads it dense as [M, K] (batch 1) or [batch, M, K] (a_k = 1, a_m = K,
/// a_batch = M K); in that stage's graph its cone holds no reduction,
/// einsum or concat (each element is a function of values read through
/// views, which tile/inline_value.h computes) and reads a float32 param of
/// its shape (read in place of A, Stage::inputs[0]). Likewise B, dense as
/// [K, N] (batch 1, or shared by the batches) or [batch, K, N]. The stage
/// that computed it keeps its other results (rebuilt for them) or goes
/// when none is left. Otherwise the stages are left as they are.
#pragma once

#include "ir/graph.h"
#include "loop/partition.h"

namespace axon::loop {

void fuse_gemm_prologues(const ir::Graph& g, Partition* p);

}  // namespace axon::loop
