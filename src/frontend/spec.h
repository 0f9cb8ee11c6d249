// The frontend's entry point: a numpy spec file -> axon's graph IR.
//
// A spec is a Python file that runs unchanged under numpy: `import numpy as
// np`, helper functions, and an entry function whose parameters carry
// annotations such as "f32[M, 4096]". parse_spec lexes, parses and lowers it
// (lexer.h, parser.h, lower.h) and returns the compacted graph with its
// entry, parameters and outputs. Every user mistake is an axon::Diagnostic
// at the file:line:col of the offending expression; valid numpy that axon
// does not handle is a Diagnostic flagged unsupported().
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/graph.h"

namespace axon::frontend {

struct SpecOptions {
  std::map<std::string, int64_t> dims;  // -D NAME=VALUE bindings for named dims in annotations
  std::string entry;                    // empty: the last top-level function whose parameters are all annotated
};

struct Spec {
  std::string path, source;  // source kept for rendering diagnostics with a caret
  ir::Graph graph;           // graph.entry, graph.params (name, type), graph.outputs filled; compacted
};

/// Throws axon::Diagnostic.
Spec parse_spec(const std::string& path, const std::string& source, const SpecOptions& opts);
/// Reads the file; an unreadable file is a Diagnostic at {path, 0, 0}.
Spec load_spec(const std::string& path, const SpecOptions& opts);

}  // namespace axon::frontend
