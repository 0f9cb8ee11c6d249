#include "transforms/remove_dead_nodes.h"

namespace axon::transforms {

ir::Graph remove_dead_nodes(const ir::Graph& g) { return ir::compact(g); }

}  // namespace axon::transforms
