// The reference interpreter: evaluates a graph in float64, node by node, by
// instantiating element_def.h with I = int64_t and S = Real. It is the living
// definition of each op; its fast paths (affine operand offsets, a matmul
// loop order that keeps rows in cache) only change how the same sum is
// walked, never which terms it adds or in which order per output element.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace axon::verify {

/// Evaluates `g` on `inputs` (one per parameter, matching its shape) and
/// returns one tensor per output.
std::vector<ir::Tensor> interpret(const ir::Graph& g, const std::vector<ir::Tensor>& inputs);

/// Evaluates every node; intermediate values are kept (for tests and tools).
std::vector<ir::Tensor> interpret_all(const ir::Graph& g, const std::vector<ir::Tensor>& inputs);

}  // namespace axon::verify
