#include "tile/inline_value.h"

#include "ir/element_def.h"
#include "support/diagnostic.h"

namespace axon::tile {

using ir::Node;
using ir::Op;

bool inlinable(const ir::Graph& g, ir::NodeId id) {
  const Node& n = g[id];
  if (n.op == Op::Param || n.op == Op::Constant || n.op == Op::Iota) return true;
  if (n.op == Op::Einsum || n.op == Op::Concat || !ir::reduction_domain(g, n).extents.empty()) return false;
  for (ir::NodeId a : n.args)
    if (!inlinable(g, a)) return false;
  return true;
}

Value inline_value(const ir::Graph& g, ir::NodeId id, const std::vector<Index>& idx,
                   const std::function<Value(int param, const std::vector<Index>& idx)>& param) {
  return inline_value(g, id, idx, param, LeafFn());
}

Value inline_value(const ir::Graph& g, ir::NodeId id, const std::vector<Index>& idx,
                   const std::function<Value(int param, const std::vector<Index>& idx)>& param, const LeafFn& leaf) {
  if (leaf)
    if (std::optional<Value> v = leaf(id, idx)) return *v;
  const Node& n = g[id];
  if (n.op == Op::Param) return param(static_cast<int>(n.attrs.ints.at(0)), idx);
  if (n.op == Op::Iota) {
    Node cast{};
    cast.op = Op::Cast;
    cast.type = ir::Type{n.type.dtype, {}};
    return Value::apply(cast, {Value::index_of(idx.at(static_cast<size_t>(n.attrs.ints.at(0))))});
  }
  if (n.op == Op::Einsum || n.op == Op::Concat || !ir::reduction_domain(g, n).extents.empty())
    throw InternalError(std::string("inline_value: a ") + ir::op_name(n.op) + " is not elementwise");
  std::vector<Value> args;
  for (size_t k = 0; k < n.args.size(); ++k)
    args.push_back(inline_value(g, n.args[k], ir::operand_index<Index>(g, n, static_cast<int>(k), idx, {}), param, leaf));
  return Value::apply(n, std::move(args));
}

}  // namespace axon::tile
