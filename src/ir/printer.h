// The textual form of a graph, as `axon check` shows it. This text is a
// stable contract: golden tests pin it.
//
//   func m4_lora(X: f32[1024, 1024], ...) -> (f32[1024, 1024]) {
//     %0: f32[1024, 1024] = param() {index = 0, name = "X"}
//     %4: f32[1024, 1024] = einsum(%0, %1) {spec = "ij,jk->ik"}
//     return %6
//   }
#pragma once

#include <string>

#include "ir/graph.h"

namespace axon::ir {

std::string print(const Graph& g);
/// One node's line without the leading indent.
std::string print_node(const Graph& g, NodeId id);

/// The shortest text that reads back as the same double ("nan", "inf" too).
std::string double_str(double v);

}  // namespace axon::ir
