// The lexer: spec source text -> tokens (token.h).
//
// Follows Python's lexical rules for what specs use: comments, blank lines,
// INDENT/DEDENT from leading whitespace (tabs advance to the next multiple of
// 8), implicit line joining inside (), [] and {}, backslash continuation,
// string literals with any prefix (single, double and triple quoted; escapes
// decoded unless raw; adjacent literals stay separate tokens), and numbers
// (decimal, 0x/0o/0b, underscores, 1., .5, 1e-6, imaginary 2j).
// Throws axon::Diagnostic at the offending character for unterminated
// strings, unbalanced brackets, inconsistent dedents and stray characters.
#pragma once

#include <string>
#include <vector>

#include "frontend/token.h"

namespace axon::frontend {

std::vector<Token> lex(const std::string& path, const std::string& source);

}  // namespace axon::frontend
