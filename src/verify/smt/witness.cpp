// The numeric half of prove_equal: evaluate both sides with the float64
// reference interpreter on small shapes and look for a difference.
#include <cmath>
#include <sstream>

#include "support/diagnostic.h"
#include "verify/inputs.h"
#include "verify/interpreter.h"
#include "verify/smt/prove.h"

namespace axon::verify::smt {

namespace {

// Sums reassociated by a rewrite differ in float64 by a few ulps of the
// terms' magnitude; real differences are many orders larger.
bool differs(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) != std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a != b;
  return std::fabs(a - b) > 1e-9 * (1 + std::max(std::fabs(a), std::fabs(b)));
}

std::string sizes_text(const DimSizes& s) {
  std::string t;
  for (const auto& [k, v] : s) t += (t.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return t.empty() ? "(no sizes)" : t;
}

std::string index_text(const ir::Shape& shape, int64_t flat) {
  std::vector<int64_t> st = ir::row_major_strides(shape);
  std::string t = "[";
  for (size_t a = 0; a < shape.size(); ++a) {
    t += (a ? ", " : "") + std::to_string(flat / st[a]);
    flat %= st[a];
  }
  return t + "]";
}

std::string values_text(const ir::Tensor& t) {
  std::ostringstream os;
  os.precision(6);
  os << "[";
  for (size_t i = 0; i < t.data.size(); ++i) os << (i ? ", " : "") << t.data[i];
  os << "]";
  return os.str();
}

}  // namespace

std::string find_numeric_counterexample(const RewriteCase& c, const std::vector<DimSizes>& trials, uint64_t seed) {
  // Ties (small signed integers) mixes signs between parameters where a few
  // normal draws may not, and stays small enough not to overflow exp.
  const Distribution dists[] = {Distribution::Normal, Distribution::ShiftedMean, Distribution::Ties};
  for (const DimSizes& sizes : trials) {
    RewritePair p;
    try {
      p = c.build(sizes);
    } catch (const std::exception&) {
      continue;  // not buildable at these sizes (e.g. a side needs two sizes equal)
    }
    AXON_CHECK(p.lhs.params.size() == p.rhs.params.size()) << c.name << ": the sides have different parameters";
    if (p.lhs.outputs.size() != p.rhs.outputs.size())
      return "the sides have " + std::to_string(p.lhs.outputs.size()) + " and " +
             std::to_string(p.rhs.outputs.size()) + " outputs";
    for (size_t o = 0; o < p.lhs.outputs.size(); ++o) {
      const ir::Type& tl = p.lhs[p.lhs.outputs[o]].type;
      const ir::Type& tr = p.rhs[p.rhs.outputs[o]].type;
      if (tl.shape != tr.shape)
        return "at " + sizes_text(sizes) + ", output " + std::to_string(o) + " has shape " + ir::shape_str(tl.shape) +
               " on the left and " + ir::shape_str(tr.shape) + " on the right";
    }
    for (Distribution d : dists) {
      // random_inputs derives each parameter's stream from one seed by a
      // fixed shift, which leaves parameters of equal shape nearly equal;
      // a witness search wants them independent, so each gets its own seed.
      std::vector<ir::Tensor> in;
      for (size_t k = 0; k < p.lhs.params.size(); ++k)
        in.push_back(random_inputs(p.lhs, seed * 1000003 + k * 7919 + 17, d).at(k));
      std::vector<ir::Tensor> l = interpret(p.lhs, in), r = interpret(p.rhs, in);
      for (size_t o = 0; o < l.size(); ++o)
        for (size_t i = 0; i < l[o].data.size(); ++i) {
          if (!differs(l[o].data[i], r[o].data[i])) continue;
          std::ostringstream os;
          os.precision(9);
          os << "at " << sizes_text(sizes) << ", inputs " << distribution_name(d) << " seed " << seed << ": output "
             << o << index_text(l[o].type.shape, static_cast<int64_t>(i)) << " is " << l[o].data[i]
             << " on the left and " << r[o].data[i] << " on the right";
          for (size_t k = 0; k < in.size(); ++k)
            if (in[k].data.size() <= 16)
              os << "\n  " << p.lhs.params[k].name << " = " << values_text(in[k]);
          return os.str();
        }
    }
  }
  return "";
}

}  // namespace axon::verify::smt
