// The element of a kernel's outputs furthest over its error budget, on the
// reference inputs of a runtime::Measurer: what `axon optimize` reports
// when a kernel it expected to pass (the naive baseline) fails its check.
//
// Contract: the kernel is compiled with `flags` (a cache hit when the
// Measurer compiled it already), called once per reference input, and every
// output compared with verify::compare_with_budget. The element with the
// largest error over budget wins, over all outputs and inputs (the first on
// a tie). nullopt when the kernel cannot be compiled or run, or when no
// element is over its budget. Throws nothing.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_source.h"
#include "ir/graph.h"
#include "runtime/measure.h"

namespace axon::optimize {

struct WorstElement {
  int output = 0;              // in return order
  int input = 0;               // which reference input set
  std::vector<int64_t> index;  // the element, one index per axis of the output
  double got = 0, reference = 0, error = 0, budget = 0;
  double over = 0;             // error / budget
  int64_t elements_over = 0;   // elements of that output over budget on that input
};

std::optional<WorstElement> worst_element(const ir::Graph& g, const runtime::Measurer& m,
                                          const codegen::KernelSource& k, const std::vector<std::string>& flags);

/// "output 0, element [3, 5] (input 1): 1.25 against 1.0 (float64), error
/// 0.25, budget 0.125 (2x the budget; 1 element over)".
std::string describe(const WorstElement& w);
nlohmann::json to_json(const WorstElement& w);

}  // namespace axon::optimize
