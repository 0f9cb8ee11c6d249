// Removes nodes that reach no output and renumbers the rest densely.
// Requires: a valid graph. Preserves: every output's value bit for bit.
// Ensures: every node reaches an output; operands precede their users.
#pragma once

#include "ir/graph.h"

namespace axon::transforms {

ir::Graph remove_dead_nodes(const ir::Graph& g);

}  // namespace axon::transforms
