#include "verify/float64_twin.h"

namespace axon::verify {

using namespace axon::ir;

DType twin_dtype(DType d) { return is_float(d) ? DType::F64 : d; }

Graph float64_twin(const Graph& g) {
  Graph t;
  t.entry = g.entry + "_f64";
  for (const ParamInfo& p : g.params) t.params.push_back(ParamInfo{p.name, Type{twin_dtype(p.type.dtype), p.type.shape}});
  std::vector<NodeId> map(static_cast<size_t>(g.size()), -1);
  for (NodeId i = 0; i < g.size(); ++i) {
    const Node& n = g[i];
    Node c = n;
    for (NodeId& a : c.args) a = map.at(static_cast<size_t>(a));
    NodeId out;
    if (n.op == Op::Cast) {
      const NodeId x = c.args[0];
      const DType to = n.type.dtype;
      if (to == DType::F64) {
        out = t[x].type.dtype == DType::F64 ? x : cast(t, x, DType::F64);
      } else if (is_float(to)) {
        out = cast(t, cast(t, x, to), DType::F64);  // round as the original does, carry in f64
      } else {
        out = cast(t, x, to);
      }
    } else {
      c.type.dtype = twin_dtype(n.type.dtype);
      out = t.make(std::move(c));
    }
    map[static_cast<size_t>(i)] = out;
  }
  for (NodeId o : g.outputs) t.outputs.push_back(map.at(static_cast<size_t>(o)));
  return compact(t);
}

}  // namespace axon::verify
