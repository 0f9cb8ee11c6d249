#include "frontend/lexer.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace axon::frontend {

std::string describe_token(const Token& t) {
  switch (t.kind) {
    case TokKind::Name:
      return is_keyword(t.text) ? "keyword '" + t.text + "'" : "name '" + t.text + "'";
    case TokKind::Int:
    case TokKind::Float:
    case TokKind::Imag:
      return "number " + t.prefix;
    case TokKind::String:
      return "a string literal";
    case TokKind::Op:
      return "'" + t.text + "'";
    case TokKind::Newline:
      return "end of line";
    case TokKind::Indent:
      return "an indented block";
    case TokKind::Dedent:
      return "the end of the indented block";
    case TokKind::End:
      return "end of file";
  }
  return "a token";
}

bool is_keyword(const std::string& w) {
  static const char* const kWords[] = {
      "False", "None",   "True",  "and",      "as",       "assert", "async", "await",
      "break", "class",  "continue", "def",   "del",      "elif",   "else",  "except",
      "finally", "for",  "from",  "global",   "if",       "import", "in",    "is",
      "lambda", "nonlocal", "not", "or",      "pass",     "raise",  "return", "try",
      "while", "with",   "yield"};
  for (const char* k : kWords)
    if (w == k) return true;
  return false;
}

namespace {

bool is_ident_start(unsigned char c) { return std::isalpha(c) || c == '_' || c >= 0x80; }
bool is_ident_char(unsigned char c) { return is_ident_start(c) || std::isdigit(c); }

// Operators, longest first so that a greedy scan picks "**=" over "**" over "*".
const char* const kOperators[] = {
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=",
    "+=",  "-=",  "*=",  "/=",  "%=",  "&=", "|=", "^=", "@=", "+",  "-",  "*",  "/",  "%",  "@",
    "&",   "|",   "^",   "~",   "<",   ">",  "(",  ")",  "[",  "]",  "{",  "}",  ",",  ":",  ".",
    ";",   "="};

class Lexer {
 public:
  Lexer(const std::string& path, const std::string& src) : path_(path), src_(src) {}

  std::vector<Token> run() {
    indents_.push_back(0);
    bool at_line_start = true;
    while (pos_ < src_.size()) {
      if (at_line_start && brackets_.empty()) {
        // A blank or comment-only line has no indentation of its own.
        at_line_start = handle_indentation();
        if (at_line_start) continue;
      }
      char c = src_[pos_];
      if (c == '\n') {
        if (brackets_.empty()) emit_newline();
        advance_line();
        at_line_start = true;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
        ++pos_;
        continue;
      }
      if (c == '#') {
        while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
        continue;
      }
      if (c == '\\') {
        size_t p = pos_ + 1;
        if (p < src_.size() && src_[p] == '\r') ++p;
        if (p < src_.size() && src_[p] == '\n') {
          pos_ = p;
          advance_line();
          continue;
        }
        fail_at(here(), "unexpected character after line continuation character");
      }
      lex_token();
    }
    if (!brackets_.empty()) {
      const Token& open = brackets_.back();
      fail_at(open.loc, "'" + open.text + "' was never closed");
    }
    emit_newline();
    while (indents_.size() > 1) {
      indents_.pop_back();
      push(TokKind::Dedent, "", here());
    }
    push(TokKind::End, "", here());
    return std::move(out_);
  }

 private:
  SourceLoc here() const { return SourceLoc{path_, line_, static_cast<int>(pos_ - line_start_) + 1}; }
  SourceLoc loc_at(size_t p) const { return SourceLoc{path_, line_, static_cast<int>(p - line_start_) + 1}; }

  void advance_line() {
    ++pos_;
    ++line_;
    line_start_ = pos_;
  }

  Token& push(TokKind kind, std::string text, SourceLoc loc) {
    Token t;
    t.kind = kind;
    t.text = std::move(text);
    t.loc = std::move(loc);
    out_.push_back(std::move(t));
    return out_.back();
  }

  void emit_newline() {
    if (!out_.empty() && out_.back().kind != TokKind::Newline && out_.back().kind != TokKind::Indent &&
        out_.back().kind != TokKind::Dedent)
      push(TokKind::Newline, "", here());
  }

  // Measures the leading whitespace of a line and emits Indent/Dedent tokens.
  // Returns true when the line holds nothing but whitespace or a comment.
  bool handle_indentation() {
    int width = 0;
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == ' ') ++width;
      else if (c == '\t') width = (width / 8 + 1) * 8;
      else if (c == '\f') width = 0;
      else break;
      ++pos_;
    }
    if (pos_ >= src_.size()) return true;
    char c = src_[pos_];
    if (c == '#' || c == '\n' || c == '\r') {
      while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
      if (pos_ < src_.size()) advance_line();
      return true;
    }
    if (width > indents_.back()) {
      if (out_.empty() || out_.back().kind != TokKind::Newline)
        fail_at(here(), "unexpected indent");
      indents_.push_back(width);
      push(TokKind::Indent, "", here());
    } else {
      while (width < indents_.back()) {
        indents_.pop_back();
        push(TokKind::Dedent, "", here());
      }
      if (width != indents_.back()) fail_at(here(), "unindent does not match any outer indentation level");
    }
    return false;
  }

  void lex_token() {
    unsigned char c = static_cast<unsigned char>(src_[pos_]);
    if (is_ident_start(c)) {
      size_t start = pos_;
      while (pos_ < src_.size() && is_ident_char(static_cast<unsigned char>(src_[pos_]))) ++pos_;
      // A string prefix glued to a quote: r"...", f'...', rb"...".
      if (pos_ < src_.size() && (src_[pos_] == '"' || src_[pos_] == '\'') && pos_ - start <= 2) {
        std::string prefix = src_.substr(start, pos_ - start);
        for (char& ch : prefix) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        static const char* const kPrefixes[] = {"r", "u", "f", "b", "br", "rb", "fr", "rf"};
        for (const char* p : kPrefixes)
          if (prefix == p) return lex_string(start, prefix);
      }
      push(TokKind::Name, src_.substr(start, pos_ - start), loc_at(start));
      return;
    }
    if (std::isdigit(c) || (c == '.' && pos_ + 1 < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_ + 1]))))
      return lex_number();
    if (c == '"' || c == '\'') return lex_string(pos_, "");
    for (const char* op : kOperators) {
      size_t n = std::strlen(op);
      if (src_.compare(pos_, n, op) == 0) {
        SourceLoc loc = here();
        pos_ += n;
        Token& t = push(TokKind::Op, op, loc);
        track_bracket(t);
        return;
      }
    }
    if (c == '!') fail_at(here(), "invalid syntax: '!' is not an operator (did you mean '!=' or 'not'?)");
    std::string shown = c >= 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c)) : "\\x" + hex(c);
    fail_at(here(), "invalid character '" + shown + "'");
  }

  static std::string hex(unsigned char c) {
    const char* digits = "0123456789abcdef";
    return std::string{digits[c >> 4], digits[c & 15]};
  }

  void track_bracket(const Token& t) {
    if (t.text == "(" || t.text == "[" || t.text == "{") {
      brackets_.push_back(t);
      return;
    }
    if (t.text != ")" && t.text != "]" && t.text != "}") return;
    if (brackets_.empty()) fail_at(t.loc, "unmatched '" + t.text + "'");
    const Token& open = brackets_.back();
    char want = open.text == "(" ? ')' : open.text == "[" ? ']' : '}';
    if (t.text[0] != want)
      fail_at(t.loc, "closing parenthesis '" + t.text + "' does not match opening parenthesis '" + open.text +
                         "' on line " + std::to_string(open.loc.line));
    brackets_.pop_back();
  }

  void lex_number() {
    size_t start = pos_;
    SourceLoc loc = here();
    std::string digits;  // the literal without underscores
    bool is_float = false;
    auto take_digits = [&](auto pred) {
      while (pos_ < src_.size() && (pred(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) {
        if (src_[pos_] != '_') digits += src_[pos_];
        ++pos_;
      }
    };
    auto is_dec = [](unsigned char ch) { return std::isdigit(ch) != 0; };
    if (src_[pos_] == '0' && pos_ + 1 < src_.size() && std::strchr("xXoObB", src_[pos_ + 1])) {
      char base_ch = static_cast<char>(std::tolower(static_cast<unsigned char>(src_[pos_ + 1])));
      int base = base_ch == 'x' ? 16 : base_ch == 'o' ? 8 : 2;
      pos_ += 2;
      take_digits([&](unsigned char ch) {
        return base == 16 ? std::isxdigit(ch) != 0 : base == 8 ? (ch >= '0' && ch <= '7') : (ch == '0' || ch == '1');
      });
      if (digits.empty()) fail_at(loc, "invalid number literal '" + src_.substr(start, pos_ - start) + "'");
      finish_int(digits, base, start, loc);
      return;
    }
    take_digits(is_dec);
    if (pos_ < src_.size() && src_[pos_] == '.') {
      is_float = true;
      digits += '.';
      ++pos_;
      take_digits(is_dec);
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (p < src_.size() && std::isdigit(static_cast<unsigned char>(src_[p]))) {
        is_float = true;
        digits += 'e';
        digits += src_.substr(pos_ + 1, p - pos_ - 1);
        pos_ = p;
        take_digits(is_dec);
      } else {
        fail_at(loc_at(pos_), "invalid float literal: exponent has no digits");
      }
    }
    if (pos_ < src_.size() && (src_[pos_] == 'j' || src_[pos_] == 'J')) {
      ++pos_;
      Token& t = push(TokKind::Imag, src_.substr(start, pos_ - start), loc);
      t.prefix = t.text;
      return;
    }
    if (pos_ < src_.size() && is_ident_start(static_cast<unsigned char>(src_[pos_])))
      fail_at(loc_at(pos_), "invalid decimal literal '" + src_.substr(start, pos_ - start + 1) + "'");
    if (is_float) {
      Token& t = push(TokKind::Float, src_.substr(start, pos_ - start), loc);
      t.prefix = t.text;
      t.float_value = std::strtod(digits.c_str(), nullptr);  // overflow gives inf, as in Python
      return;
    }
    if (digits.size() > 1 && digits[0] == '0' && digits.find_first_not_of('0') != std::string::npos)
      fail_at(loc, "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers");
    finish_int(digits, 10, start, loc);
  }

  void finish_int(const std::string& digits, int base, size_t start, const SourceLoc& loc) {
    errno = 0;
    unsigned long long v = std::strtoull(digits.c_str(), nullptr, base);
    std::string spelled = src_.substr(start, pos_ - start);
    if (errno == ERANGE || v > static_cast<unsigned long long>(INT64_MAX))
      fail_unsupported_at(loc, "integer literal " + spelled + " does not fit in 64 bits");
    Token& t = push(TokKind::Int, spelled, loc);
    t.prefix = spelled;
    t.int_value = static_cast<int64_t>(v);
  }

  void lex_string(size_t start, const std::string& prefix) {
    SourceLoc loc = loc_at(start);
    pos_ = start + prefix.size();
    char quote = src_[pos_];
    bool triple = src_.compare(pos_, 3, std::string(3, quote)) == 0;
    bool raw = prefix.find('r') != std::string::npos;
    pos_ += triple ? 3 : 1;
    std::string value;
    while (true) {
      if (pos_ >= src_.size())
        fail_at(loc, triple ? "unterminated triple-quoted string literal" : "unterminated string literal");
      char c = src_[pos_];
      if (c == '\n') {
        if (!triple) fail_at(loc, "unterminated string literal");
        value += c;
        advance_line();
        continue;
      }
      if (c == quote) {
        if (!triple) {
          ++pos_;
          break;
        }
        if (src_.compare(pos_, 3, std::string(3, quote)) == 0) {
          pos_ += 3;
          break;
        }
      }
      if (c == '\\' && pos_ + 1 < src_.size()) {
        char e = src_[pos_ + 1];
        if (e == '\n') {  // an escaped newline continues the literal
          if (raw) value += "\\\n";
          ++pos_;
          advance_line();
          continue;
        }
        pos_ += 2;
        if (raw) {
          value += '\\';
          value += e;
          continue;
        }
        switch (e) {
          case 'n': value += '\n'; break;
          case 't': value += '\t'; break;
          case 'r': value += '\r'; break;
          case '0': value += '\0'; break;
          case '\\': value += '\\'; break;
          case '\'': value += '\''; break;
          case '"': value += '"'; break;
          case 'x':
            if (pos_ + 2 <= src_.size() && std::isxdigit(static_cast<unsigned char>(src_[pos_])) &&
                std::isxdigit(static_cast<unsigned char>(src_[pos_ + 1]))) {
              value += static_cast<char>(std::strtol(src_.substr(pos_, 2).c_str(), nullptr, 16));
              pos_ += 2;
              break;
            }
            fail_at(loc_at(pos_ - 2), "truncated \\xXX escape");
          default:  // unknown escapes keep the backslash, as Python does
            value += '\\';
            value += e;
        }
        continue;
      }
      value += c;
      ++pos_;
    }
    Token& t = push(TokKind::String, std::move(value), loc);
    t.prefix = prefix;
  }

  const std::string& path_;
  const std::string& src_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
  std::vector<int> indents_;
  std::vector<Token> brackets_;
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> lex(const std::string& path, const std::string& source) {
  return Lexer(path, source).run();
}

}  // namespace axon::frontend
