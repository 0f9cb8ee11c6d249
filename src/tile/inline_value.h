// inline_value: the value of a graph node at one element as a tile-IR
// Value, the node's elementwise and layout ops applied in place (their
// meaning is ir::body, their addressing ir::operand_index), so that a
// lowering can compute a subgraph where it is needed instead of storing it.
//
/// Requires: inlinable(g, id): no node of id's cone (down to its Params)
/// is a reduction, an einsum or a concat. `param(p, idx)` gives the value
/// of graph parameter p at index idx (a Load of the buffer that holds it,
/// or any Value a lowering has at hand); Constants become literals and
/// Iotas their index. With `leaf`, every node is first offered to it: a
/// Value it returns stands for the node at that index (a reduction a
/// lowering has already computed into a register, say), and the node's cone
/// is not inlined; then only the nodes `leaf` declines must be inlinable.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "tile/value.h"

namespace axon::tile {

bool inlinable(const ir::Graph& g, ir::NodeId id);

Value inline_value(const ir::Graph& g, ir::NodeId id, const std::vector<Index>& idx,
                   const std::function<Value(int param, const std::vector<Index>& idx)>& param);

using LeafFn = std::function<std::optional<Value>(ir::NodeId id, const std::vector<Index>& idx)>;
Value inline_value(const ir::Graph& g, ir::NodeId id, const std::vector<Index>& idx,
                   const std::function<Value(int param, const std::vector<Index>& idx)>& param, const LeafFn& leaf);

}  // namespace axon::tile
