// fuse_epilogue_groups: a contraction stage and the elementwise stage that
// reads its result become one Epilogue stage (loop/partition.h), which the
// code generator lowers as the GEMM with the elementwise function applied
// to each tile of the product before it is stored (tile/lower_gemm.h), so
// that the product never makes a round trip through memory.
//
/// The elementwise stage (Row or Naive) must have one result, float32 and
/// of the product's shape, and hold no reduction, einsum or concat: its
/// value at an element is then a function of the product at that same
/// element and of other values read through views (a bias broadcast
/// along rows, a residual, a row scale, another product), which
/// tile/inline_value.h builds from the stage's graph. The product must be
/// read by that stage alone, never through a layout op (only elementwise
/// ops between it and the result, so only the element being computed is
/// read), and not be an output of the graph; a role (batch, m, n) may span
/// several axes of the output when the contraction reads them as one flat
/// axis (a batch against a shared weight is one [B*M, K] x [K, N] product:
/// a per-batch bias [B, 1, N] is then read at (m / M, 0, n)). When the stage
/// reads several such products, the last one computed takes the epilogue
/// and the others are read as inputs. Other graphs are left as they are:
/// a value of the epilogue also read elsewhere, or a reduction after the
/// product, keeps its stages.
#pragma once

#include <string>

#include "ir/graph.h"
#include "loop/partition.h"

namespace axon::loop {

void fuse_epilogue_groups(const ir::Graph& g, Partition* p);

/// Why the product of Contraction stage `stage` of `p` (after
/// fuse_epilogue_groups) is stored for the stages that read it instead of
/// being their epilogue, in one line naming the value, op or count at
/// fault; "" when no stage reads it (it is only an output) or stage is no
/// Contraction. What `axon explain` and report.json say, so that an
/// unfused product is visible (docs/loop_ir.md).
std::string epilogue_refusal(const ir::Graph& g, const Partition& p, size_t stage);

/// Whether param p of `sub` reaches the outputs through elementwise ops
/// only, so that it is read at the element being computed and nowhere else
/// (what an epilogue on the accumulator tile may do with it).
bool read_in_place(const ir::Graph& sub, int p);

}  // namespace axon::loop
