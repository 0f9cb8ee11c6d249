// The reference interpreter: evaluates a graph in float64, node by node, by
// instantiating element_def.h with I = int64_t and S = Real. It is the living
// definition of each op; its fast paths (affine operand offsets, a matmul
// loop order that keeps rows in cache) only change how the same sum is
// walked, never which terms it adds or in which order per output element.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace axon::verify {

/// A dense row-major tensor of float64 values (bool as 0/1, ints exactly).
struct Tensor {
  ir::Type type;
  std::vector<double> data;
};

/// Evaluates `g` on `inputs` (one per parameter, matching its shape) and
/// returns one tensor per output.
std::vector<Tensor> interpret(const ir::Graph& g, const std::vector<Tensor>& inputs);

/// Evaluates every node; intermediate values are kept (for tests and tools).
std::vector<Tensor> interpret_all(const ir::Graph& g, const std::vector<Tensor>& inputs);

}  // namespace axon::verify
