#include "ir/element_def.h"

namespace axon::ir {

ReductionDomain reduction_domain(const Graph& g, const Node& n) {
  ReductionDomain d;
  switch (n.op) {
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::ReduceMin: {
      d.combine = n.op == Op::ReduceSum ? Combine::Sum : n.op == Op::ReduceMax ? Combine::Max : Combine::Min;
      const Type& in = g[n.args[0]].type;
      for (int64_t a : n.attrs.ints) d.extents.push_back(in.shape[a]);
      return d;
    }
    case Op::Einsum: {
      EinsumSpec s;
      parse_einsum(n.attrs.text, &s);
      d.combine = Combine::Sum;
      const Type& a = g[n.args[0]].type;
      const Type& b = g[n.args[1]].type;
      for (char c : s.reduced()) {
        size_t p = s.a.find(c);
        d.extents.push_back(p != std::string::npos ? a.shape[p] : b.shape[s.b.find(c)]);
      }
      return d;
    }
    default:
      return d;
  }
}

std::vector<int64_t> concat_offsets(const Graph& g, const Node& n) {
  std::vector<int64_t> off;
  int axis = static_cast<int>(n.attrs.ints.at(0));
  int64_t at = 0;
  for (NodeId a : n.args) {
    off.push_back(at);
    at += g[a].type.shape[axis];
  }
  return off;
}

}  // namespace axon::ir
