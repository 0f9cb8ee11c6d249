// fuse_paired_epilogues: two Epilogue stages (loop/epilogue_group.h) whose
// products share their A operand, where the second's elementwise function
// reads the first's result at the element it computes and nothing else
// reads that result, become one paired Epilogue stage: the code generator
// computes both products from the same A panel and applies the combined
// function to the two accumulator tiles before one store (tile/lower_gemm.h,
// GemmEpilogue::paired). A gated MLP, silu(X W1) * (X W3), is the case:
// X is read once for both weights and the gate never goes to memory.
//
/// The two products must agree in everything but B's base: batch, M, N,
/// K, A's base and strides, B's strides and the output's layout (roles).
/// The first stage's result must be float32, no output of the graph, read
/// by the second stage alone and there only through elementwise ops (at the
/// element computed). The paired stage takes the second stage's place
/// (both stages' inputs are computed before the first); the first goes.
#pragma once

#include "ir/graph.h"
#include "loop/partition.h"

namespace axon::loop {

void fuse_paired_epilogues(const ir::Graph& g, Partition* p);

}  // namespace axon::loop
