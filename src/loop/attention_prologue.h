// fuse_attention_prologues: a row stage that computes the Q or the K (or
// both) of an Attention stage's first product with a function of each row
// alone (QK-norm: an RMSNorm or a LayerNorm over the head dimension, with
// its gain) joins that stage as its prologue, so the kernel normalises each
// row as it reads it (tile/lower_attention.h) and the normalised Q and K
// never pass through memory.
//
/// The row stage joins when: each of its results is the Q or the K base of
/// the Attention stage's first product, or read by no stage, and none is
/// read by another stage or is an output of the graph (nor the V or an
/// extra of the stage);
/// such a result is dense [batch, rows, D] as the product reads it (D the
/// contraction axis, unit stride); its cone in the row stage's graph holds
/// no einsum or concat, its reductions each reduce the last axis of a
/// value of its shape, and a reduction's result reaches it through
/// elementwise ops of that shape or of the row's ([batch, rows] or
/// [batch, rows, 1]), Broadcasts of the last axis and Reshapes that add or
/// drop a trailing unit axis only (so tile/row_function.h computes it with
/// one register per reduction); it reads a float32 param of its own shape
/// (the source row). The Attention stage has no second score product.
/// Otherwise the stages are left as they are.
#pragma once

#include "ir/graph.h"
#include "loop/partition.h"

namespace axon::loop {

void fuse_attention_prologues(const ir::Graph& g, Partition* p);

}  // namespace axon::loop
