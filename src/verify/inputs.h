// Random inputs for a graph's parameters, reproducible from a seed on every
// platform and however the work is split (own generator and transforms, no
// std::*_distribution, no libm: verify/random_values.h).
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

/// How a set of inputs is drawn: values of `dist`, then x * scale + offset,
/// rounded once to the parameter's dtype (floating-point parameters only).
struct Draw {
  Distribution dist = Distribution::Normal;
  double scale = 1, offset = 0;
};

/// One tensor per parameter; floats are exactly representable in the
/// parameter's dtype, bools are 0/1, ints small. Parameter p's values are
/// the stream keyed by (seed, p): element i depends on nothing else.
std::vector<ir::Tensor> random_inputs(const ir::Graph& g, uint64_t seed, Distribution dist = Distribution::Normal);

/// The same for a Draw; when `buffers` is given, it also receives each
/// tensor's bytes in its dtype's C representation (verify::to_buffer of
/// it), written in the same pass as the values.
std::vector<ir::Tensor> random_inputs(const ir::Graph& g, uint64_t seed, const Draw& draw,
                                      std::vector<std::vector<uint8_t>>* buffers = nullptr);

}  // namespace axon::verify
