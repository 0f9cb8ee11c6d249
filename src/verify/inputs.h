// Random inputs for a graph's parameters, reproducible from a seed on every
// platform (own generator and transforms, no std::*_distribution).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "verify/interpreter.h"

namespace axon::verify {

enum class Distribution {
  Normal,       // standard normal
  ShiftedMean,  // normal with mean 3
  WideRange,    // sign * 2^u, u uniform in [-20, 20]
  Large,        // normal * 100: overflows a naive exp
  Ties,         // small integers: many exact ties for max
  Tiny,         // normal * 1e-30
};
const char* distribution_name(Distribution d);
bool parse_distribution(const std::string& name, Distribution* out);

/// One tensor per parameter; floats are exactly representable in the
/// parameter's dtype, bools are 0/1, ints small.
std::vector<ir::Tensor> random_inputs(const ir::Graph& g, uint64_t seed, Distribution dist = Distribution::Normal);

/// Every floating-point value of `inputs` as x * scale + offset, rounded to
/// its tensor's dtype (offset 1000: the large_mean inputs of the gate and
/// of optimize's check of rewritten variants).
void scale_and_shift(std::vector<ir::Tensor>& inputs, double scale, double offset);

}  // namespace axon::verify
