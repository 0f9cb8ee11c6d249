// A spec as the Python package holds it: parsed by the frontend, through the
// graph pass pipeline, exactly as the CLI's load() does.
//
// Two ways in: a spec file and an entry name (axon.optimize(path, ...)), or
// a spec text the package assembled from a Python function and the helpers
// it calls (axon/_spec.py). The assembled text puts the function's lines
// after a short preamble, so its diagnostics are mapped back through
// `line_map` (one (file line, column shift) per text line, 0 for a
// preamble line) to the function's file, and rendered against that file's
// text: the SpecError reads exactly like the CLI's message for that file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "frontend/annotation.h"
#include "ir/graph.h"

namespace axon::python {

struct Program {
  std::string path;  // the file diagnostics name
  ir::Graph graph;   // after transforms::run_pipeline; graph.entry, params, outputs
};

using Dims = std::map<std::string, int64_t>;
using LineMap = std::vector<std::pair<int, int>>;

/// Throws SpecError with the rendered diagnostic.
Program load_file_spec(const std::string& path, const std::string& entry, const Dims& dims);
/// Throws SpecError, its location mapped through `line_map` into `path`.
Program parse_text_spec(const std::string& path, const std::string& text, const std::string& entry,
                        const Dims& dims, const LineMap& line_map);

/// An annotation read without binding its named dims (frontend/annotation.h).
/// Throws SpecError naming `where` (the parameter) when it is malformed.
frontend::AnnotationPattern annotation_pattern(const std::string& text, const std::string& where);

}  // namespace axon::python
