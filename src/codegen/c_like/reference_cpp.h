// The C++ of a compiled float64 reference: a graph (in practice the float64
// twin of verify/float64_twin.h) lowered by the tile IR's "loops" pipeline
// without the vector form, and printed by print_tile_cpp. It carries no
// vector intrinsics (its register tiles are GCC vectors of 4 doubles, each
// lane the scalar operation) and no fast-math assumptions: compiled with
// -ffp-contract=off it rounds every operation as the graph writes it, and
// differs from verify::interpret only in the order of long sums (the
// pipeline blocks them; docs/error_budget.md, "The compiled reference").
// Its float64 matrix products are register tiles (tile/passes/
// matmul_nests.h) whose every element is the interpreter's serial chain.
// Its temporaries come from a pool kept across calls (TileCppOptions::
// scratch_pool), so that the input sets after the first do not fault the
// pages of its (up to gigabytes of) temporaries in again.
#pragma once

#include "codegen/kernel_source.h"
#include "ir/graph.h"

namespace axon::codegen {

/// `threads` > 1: big nests run on that many OpenMP threads.
KernelSource print_reference_cpp(const ir::Graph& g, int threads);

}  // namespace axon::codegen
