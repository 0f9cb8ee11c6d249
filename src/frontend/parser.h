// The parser: tokens (lexer.h) -> syntax tree (ast.h), by recursive descent
// over Python's grammar for the statements and expressions a spec uses.
//
// Precedence follows Python exactly, loosest first: conditional expression,
// or, and, not, comparisons (chained), |, ^, &, << >>, + -, * / // % @,
// unary + - ~, ** (right-associative, and binding tighter than a unary minus
// on its left: -x**2 is -(x**2), while 2**-1 is 2**(-1)), then calls,
// subscripts and attributes.
// Compound statements other than def (if/for/while/with/try/class, and
// decorators) are skipped as whole blocks and kept as Stmt::Unsupported; the
// lowering refuses them only if they run. Lambdas, comprehensions, dict/set
// displays, star-args and walrus are refused here. Syntax errors are
// Diagnostics at the offending token that say what was expected.
#pragma once

#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/token.h"

namespace axon::frontend {

Module parse_module(const std::string& path, const std::vector<Token>& tokens);

}  // namespace axon::frontend
