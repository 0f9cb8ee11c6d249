// Lowering: a parsed spec (ast.h) -> axon's graph IR.
//
// The lowering runs the spec the way Python would, except that arrays are
// symbolic: module-level statements execute in order (imports, constants,
// function definitions), then the entry function is called with one Param
// node per annotated parameter. Helper calls are inlined at each call site
// with Python's argument binding (defaults, keywords); Python scalars fold as
// they are computed; numpy calls build nodes through ArrayBuilder. The
// returned array, or each array of a returned tuple, becomes an output.
// Anything outside the subset is reported where it is written, and only if
// it actually runs.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "frontend/ast.h"
#include "ir/graph.h"

namespace axon::frontend {

/// `entry` empty: the last top-level function whose parameters are all
/// annotated (and that has at least one). The graph is not yet compacted.
ir::Graph lower_module(const Module& module, const std::map<std::string, int64_t>& dims, const std::string& entry);

}  // namespace axon::frontend
