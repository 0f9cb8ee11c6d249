// Tokens of the Python subset that specs are written in.
//
// The lexer (lexer.h) turns a spec file into a flat token vector in which
// indentation is explicit (Indent/Dedent), logical lines end with Newline and
// the vector always ends with End. Every token carries the 1-based line and
// byte column of its first character.
#pragma once

#include <cstdint>
#include <string>

#include "support/diagnostic.h"

namespace axon::frontend {

enum class TokKind {
  Name,     // identifiers and keywords alike; the parser tells them apart
  Int,      // integer literal: int_value (text keeps the spelling)
  Float,    // float literal: float_value
  Imag,     // imaginary literal such as 2j (always refused later)
  String,   // string literal, escapes decoded into text
  Op,       // operator or delimiter, spelled in text
  Newline,  // end of a logical line
  Indent,
  Dedent,
  End,
};

struct Token {
  TokKind kind = TokKind::End;
  std::string text;  // Name: the identifier; String: the decoded value; Op: the spelling
  int64_t int_value = 0;
  double float_value = 0;
  std::string prefix;  // String: the lower-cased prefix letters ("", "r", "f", "b", ...)
  SourceLoc loc;

  bool is_op(const char* spelling) const { return kind == TokKind::Op && text == spelling; }
  bool is_name(const char* word) const { return kind == TokKind::Name && text == word; }
};

/// "name 'foo'", "')'", "newline", "end of file": how a token reads in an error.
std::string describe_token(const Token& t);

/// Python's reserved words; a Name token spelled like one is a keyword.
bool is_keyword(const std::string& word);

}  // namespace axon::frontend
