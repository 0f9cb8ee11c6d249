// The graph IR: a flat vector of immutable, hash-consed nodes whose operands
// always point to earlier entries (egg's RecExpr layout), plus the entry's
// parameters and outputs. Nodes are created only through Graph::make, which
// checks each op's invariants (see verify_node in verify.h) and returns the
// existing node when an identical one is already present.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/op.h"
#include "ir/type.h"
#include "support/diagnostic.h"

namespace axon::ir {

using NodeId = int32_t;

/// Op-specific data. Which fields an op uses:
///   Param: ints = {index}     Constant: value      Iota: ints = {axis}
///   ReduceSum/Max/Min: ints = reduced axes (sorted, unique)
///   Einsum: text = "ab,bc->ac"   Transpose: ints = perm
///   Slice: ints = starts, ints2 = steps (non-zero)   Concat: ints = {axis}
///   Cast, Broadcast, Reshape: the target is the node's type
struct Attrs {
  std::vector<int64_t> ints;
  std::vector<int64_t> ints2;
  double value = 0;
  std::string text;
  bool operator==(const Attrs& o) const;
};

struct Node {
  Op op;
  Type type;
  std::vector<NodeId> args;
  Attrs attrs;
  bool operator==(const Node& o) const;
};

struct ParamInfo {
  std::string name;
  Type type;
};

class Graph {
 public:
  /// Adds `n` (or finds its twin) after checking its invariants. References
  /// returned by node() are invalidated by make(): copy what you need first.
  NodeId make(Node n);
  const Node& node(NodeId id) const { return nodes_.at(static_cast<size_t>(id)); }
  const Node& operator[](NodeId id) const { return node(id); }
  int size() const { return static_cast<int>(nodes_.size()); }
  const std::vector<Node>& nodes() const { return nodes_; }

  std::string entry;                 // the entry function's name
  std::vector<ParamInfo> params;     // in the spec's parameter order
  std::vector<NodeId> outputs;       // in return order
  std::map<NodeId, SourceLoc> locs;  // side table: where a node was first written

  /// Records where `id` was written, keeping the first location.
  void note_loc(NodeId id, const SourceLoc& loc) { locs.emplace(id, loc); }

  /// A hash of what the outputs compute (independent of node numbering and of
  /// nodes that do not reach an output).
  uint64_t structural_hash() const;

 private:
  std::vector<Node> nodes_;
  std::unordered_map<uint64_t, std::vector<NodeId>> by_hash_;
};

uint64_t hash_node(const Node& n);

/// The nodes that reach an output, renumbered densely in topological order.
Graph compact(const Graph& g);

// ---- Typed builders: infer the result type and check operands. The frontend
// validates user input first and reports Diagnostics; a failed check here is
// an internal error.
NodeId param(Graph& g, int index);  // g.params[index] must exist
NodeId constant(Graph& g, double value, DType dtype);  // 0-d
NodeId iota(Graph& g, const Shape& shape, int axis, DType dtype);
NodeId unary(Graph& g, Op op, NodeId a);
NodeId cast(Graph& g, NodeId a, DType to);
NodeId binary(Graph& g, Op op, NodeId a, NodeId b);
NodeId select(Graph& g, NodeId cond, NodeId a, NodeId b);
NodeId reduce(Graph& g, Op op, NodeId a, std::vector<int64_t> axes);
NodeId einsum(Graph& g, const std::string& spec, NodeId a, NodeId b);
NodeId broadcast(Graph& g, NodeId a, const Shape& to);
NodeId reshape(Graph& g, NodeId a, const Shape& to);
NodeId transpose(Graph& g, NodeId a, const std::vector<int64_t>& perm);
/// Per axis: first index read, step (non-zero), number of elements.
NodeId slice(Graph& g, NodeId a, const std::vector<int64_t>& starts,
             const std::vector<int64_t>& steps, const Shape& out_shape);
NodeId concat(Graph& g, const std::vector<NodeId>& parts, int axis);

/// Parsed einsum spec: labels per operand and of the output.
struct EinsumSpec {
  std::string a, b, out;
  /// Labels summed over, in order of first appearance in a then b.
  std::string reduced() const;
};
/// Parses "ab,bc->ac"; false when malformed.
bool parse_einsum(const std::string& text, EinsumSpec* out);

}  // namespace axon::ir
