#include "verify/inputs.h"

#include <cmath>

#include "ir/real.h"

namespace axon::verify {

namespace {
// splitmix64: small, fast, and the same everywhere.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
  double normal() {  // Box-Muller, one value per call
    double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

constexpr const char* kNames[] = {"normal", "shifted_mean", "wide_range", "large", "ties", "tiny"};
}  // namespace

const char* distribution_name(Distribution d) { return kNames[static_cast<int>(d)]; }
bool parse_distribution(const std::string& name, Distribution* out) {
  for (int i = 0; i < 6; ++i)
    if (name == kNames[i]) {
      *out = static_cast<Distribution>(i);
      return true;
    }
  return false;
}

std::vector<ir::Tensor> random_inputs(const ir::Graph& g, uint64_t seed, Distribution dist) {
  std::vector<ir::Tensor> out;
  for (size_t p = 0; p < g.params.size(); ++p) {
    const ir::Type& t = g.params[p].type;
    // Each parameter's stream starts at a state hashed from (seed, p), so
    // parameters of the same shape are not shifted copies of each other.
    Rng rng{Rng{seed * 0x100000001b3ull + p + 1}.next()};
    ir::Tensor x{t, std::vector<double>(static_cast<size_t>(t.numel()))};
    for (double& v : x.data) {
      if (t.dtype == ir::DType::Bool) { v = static_cast<double>(rng.next() & 1); continue; }
      if (ir::is_integer(t.dtype)) { v = static_cast<double>(static_cast<int64_t>(rng.next() % 17) - 8); continue; }
      switch (dist) {
        case Distribution::Normal: v = rng.normal(); break;
        case Distribution::ShiftedMean: v = 3 + rng.normal(); break;
        case Distribution::WideRange: v = (rng.next() & 1 ? 1 : -1) * std::exp2(-20 + 40 * rng.uniform()); break;
        case Distribution::Large: v = 100 * rng.normal(); break;
        case Distribution::Ties: v = static_cast<double>(static_cast<int64_t>(rng.next() % 5) - 2); break;
        case Distribution::Tiny: v = 1e-30 * rng.normal(); break;
      }
      v = ir::cast_to(t.dtype, ir::Real{v}).v;  // exactly representable in the parameter's dtype
    }
    out.push_back(std::move(x));
  }
  return out;
}

void scale_and_shift(std::vector<ir::Tensor>& inputs, double scale, double offset) {
  for (ir::Tensor& t : inputs)
    if (ir::is_float(t.type.dtype))
      for (double& x : t.data) x = ir::cast_to(t.type.dtype, ir::Real{x * scale + offset}).v;
}

}  // namespace axon::verify
