#include "program.h"

#include <fstream>
#include <iterator>

#include "errors.h"
#include "frontend/spec.h"
#include "support/diagnostic.h"
#include "transforms/pipeline.h"

namespace axon::python {

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

Program finish(frontend::Spec spec) {
  Program p;
  p.path = spec.path;
  p.graph = transforms::run_pipeline(std::move(spec.graph));
  return p;
}

}  // namespace

Program load_file_spec(const std::string& path, const std::string& entry, const Dims& dims) {
  frontend::SpecOptions o;
  o.entry = entry;
  o.dims = dims;
  try {
    return finish(frontend::load_spec(path, o));
  } catch (const Diagnostic& d) {
    throw SpecError(d.render(read_file(d.loc().file)));
  }
}

Program parse_text_spec(const std::string& path, const std::string& text, const std::string& entry,
                        const Dims& dims, const LineMap& line_map) {
  frontend::SpecOptions o;
  o.entry = entry;
  o.dims = dims;
  try {
    return finish(frontend::parse_spec(path, text, o));
  } catch (const Diagnostic& d) {
    const SourceLoc& at = d.loc();
    size_t i = static_cast<size_t>(at.line - 1);
    if (at.valid() && at.file == path && i < line_map.size() && line_map[i].first > 0) {
      SourceLoc mapped{path, line_map[i].first, at.col + line_map[i].second};
      throw SpecError(Diagnostic(mapped, d.message(), d.unsupported()).render(read_file(path)));
    }
    throw SpecError(d.render(at.file == path ? text : read_file(at.file)));
  }
}

frontend::AnnotationPattern annotation_pattern(const std::string& text, const std::string& where) {
  try {
    return frontend::read_annotation_pattern(text, SourceLoc{where, 0, 0});
  } catch (const Diagnostic& d) {
    throw SpecError(d.render(""));
  }
}

}  // namespace axon::python
