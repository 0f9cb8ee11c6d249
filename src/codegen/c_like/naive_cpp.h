// The naive C++ kernel: the reference point every optimised kernel is
// measured against, and the first thing a user can ship.
//
/// Emits one loop nest per graph node in plain single-threaded C++ (no
/// fusion, no intrinsics, no OpenMP), written by instantiating element_def.h
/// with CIndex and CScalar, so it computes what the interpreter computes.
/// Requires: a verified graph. Ensures: kernel.h declares the C ABI of
/// kernel_abi.h; kernel.cpp includes only kernel.h and the C++ standard
/// library; intermediates live on the heap and are freed after their last use.
///
/// Loop nests: output axes outermost, in order. Sum-einsums zero their output
/// and put the reduction loops before the last output axis (i, k, j order) so
/// the innermost loop is contiguous; they accumulate in the node's dtype.
/// Other reductions keep an accumulator, started by combine_identity and
/// folded by combine_step, with the reduction loops innermost; f16 and bf16
/// einsums take that path too, accumulating in float. Concat writes one slab
/// per operand. Unit axes get no loop. Constants, and layout ops of
/// constants, are not materialised: their uses read the literal.
#pragma once

#include "codegen/kernel_source.h"
#include "ir/graph.h"

namespace axon::codegen {

KernelSource emit_naive_cpp(const ir::Graph& g);

}  // namespace axon::codegen
