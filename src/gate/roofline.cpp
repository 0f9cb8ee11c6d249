#include "gate/roofline.h"

#include <algorithm>
#include <thread>

#include "ir/element_def.h"

namespace axon::gate {

using namespace axon::ir;

Roofline roofline_floor(const Graph& g, const GateOptions& opts) {
  Roofline r;
  // Which nodes depend on a parameter.
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
      r.flops += 2 * terms;
    } else if (is_reduction(n.op)) {
      r.flops += static_cast<double>(g[n.args[0]].type.numel());
    } else if (is_elementwise(n.op)) {
      r.flops += out;
    }
  }
  for (const ParamInfo& p : g.params) r.bytes += static_cast<double>(p.type.numel()) * dtype_bytes(p.type.dtype);
  for (NodeId o : g.outputs) r.bytes += static_cast<double>(g[o].type.numel()) * dtype_bytes(g[o].type.dtype);
  int cores = opts.cores > 0 ? opts.cores : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  double hz = opts.ghz * 1e9 * cores;
  double t = std::max(r.flops / (opts.flops_per_cycle_per_core * hz), r.bytes / (opts.bytes_per_cycle_per_core * hz));
  r.floor_ms = t * 1e3;
  return r;
}

}  // namespace axon::gate
