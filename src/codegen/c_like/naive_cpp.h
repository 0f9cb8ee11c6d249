// The naive C++ kernel: the reference point every optimised kernel is
// measured against, and the first thing a user can ship.
//
/// The graph lowered to the tile IR (tile/lower_graph.h: one loop nest per
/// node, in plain single-threaded C++, no fusion, no intrinsics), with its
/// long sums blocked into trees (tile/passes/cascade_sums.h, so that a sum's
/// error grows like log n), printed by tile_cpp.h. Requires: a verified
/// graph. Ensures: kernel.h declares the C ABI of kernel_abi.h; kernel.cpp
/// includes only kernel.h and the C++ standard library and has no pragma;
/// intermediates live on the heap and are freed after their last use.
#pragma once

#include "codegen/kernel_source.h"
#include "ir/graph.h"

namespace axon::codegen {

KernelSource emit_naive_cpp(const ir::Graph& g);

}  // namespace axon::codegen
