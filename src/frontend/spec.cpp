#include "frontend/spec.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "frontend/lexer.h"
#include "frontend/lower.h"
#include "frontend/parser.h"

namespace axon::frontend {

Spec parse_spec(const std::string& path, const std::string& source, const SpecOptions& opts) {
  Spec spec;
  spec.path = path;
  spec.source = source;
  std::vector<Token> tokens = lex(path, source);
  Module module = parse_module(path, tokens);
  spec.graph = ir::compact(lower_module(module, opts.dims, opts.entry));
  return spec;
}

Spec load_spec(const std::string& path, const SpecOptions& opts) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_at(SourceLoc{path, 0, 0}, std::string("cannot read spec file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail_at(SourceLoc{path, 0, 0}, "cannot read spec file");
  return parse_spec(path, text.str(), opts);
}

}  // namespace axon::frontend
