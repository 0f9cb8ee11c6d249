// FLOP and byte counts of a graph; the contract is in cost.h.
#include "analysis/cost.h"

#include <algorithm>

#include "ir/element_def.h"

namespace axon::analysis {

using namespace axon::ir;

Cost graph_cost(const Graph& g) {
  Cost c;
  std::vector<bool> live(static_cast<size_t>(g.size()), false);
  for (NodeId i = 0; i < g.size(); ++i) {
    const Node& n = g[i];
    bool l = n.op == Op::Param;
    for (NodeId a : n.args) l = l || live[static_cast<size_t>(a)];
    live[static_cast<size_t>(i)] = l;
    if (!l) continue;
    double out = static_cast<double>(n.type.numel());
    if (n.op == Op::Einsum) {
      double terms = out;
      for (int64_t e : reduction_domain(g, n).extents) terms *= static_cast<double>(e);
      c.flops += 2 * terms;
      c.contraction_flops += 2 * terms;
    } else if (is_reduction(n.op)) {
      c.flops += static_cast<double>(g[n.args[0]].type.numel());
    } else if (is_elementwise(n.op)) {
      c.flops += out;
    }
  }
  for (const ParamInfo& p : g.params) c.bytes += static_cast<double>(p.type.numel()) * dtype_bytes(p.type.dtype);
  for (NodeId o : g.outputs) c.bytes_written += static_cast<double>(g[o].type.numel()) * dtype_bytes(g[o].type.dtype);
  c.bytes += c.bytes_written;
  return c;
}

double roofline_floor_ms(const Cost& c, double peak_gflops, double peak_gbs) {
  if (peak_gflops <= 0 || peak_gbs <= 0) return 0;
  return std::max(c.flops / (peak_gflops * 1e9), c.bytes / (peak_gbs * 1e9)) * 1e3;
}

}  // namespace axon::analysis
