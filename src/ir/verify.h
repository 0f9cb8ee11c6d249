// The IR invariant checker. verify_node runs on every node Graph::make adds;
// verify runs over a whole graph after each pass in debug builds (and in
// tests). A violation is axon's bug: it throws InternalError.
#pragma once

#include "ir/graph.h"

namespace axon::ir {

/// Checks one node against its op's typing rules (operands are already in `g`).
void verify_node(const Graph& g, const Node& n);
/// Checks every node, the params and the outputs.
void verify(const Graph& g);

}  // namespace axon::ir
