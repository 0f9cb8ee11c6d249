// The parser: module, statements and token access (expressions are in parse_expr.cpp).
#include "frontend/parser.h"

#include <set>

#include "frontend/parser_impl.h"

namespace axon::frontend {

Module Parser::parse() {
  Module m;
  m.path = path_;
  while (peek().kind != TokKind::End) {
    if (peek().kind == TokKind::Newline) {
      next();
      continue;
    }
    if (peek().kind == TokKind::Indent) fail_at(peek().loc, "unexpected indent");
    statement(m.body);
  }
  return m;
}

const Token& Parser::next() {
  const Token& t = t_[p_];
  if (p_ + 1 < t_.size()) ++p_;
  return t;
}

bool Parser::accept_op(const char* op) {
  if (!at_op(op)) return false;
  next();
  return true;
}

bool Parser::accept_kw(const char* kw) {
  if (!at_kw(kw)) return false;
  next();
  return true;
}

[[noreturn]] void Parser::fail_expected(const std::string& what) {
  fail_at(peek().loc, "expected " + what + ", got " + describe_token(peek()));
}

const Token& Parser::expect_op(const char* op, const std::string& context) {
  if (!at_op(op)) fail_expected(std::string("'") + op + "'" + (context.empty() ? "" : " " + context));
  return next();
}

const Token& Parser::expect_name(const std::string& what) {
  if (peek().kind != TokKind::Name || is_keyword(peek().text)) fail_expected(what);
  return next();
}

void Parser::expect_end_of_statement() {
  if (peek().kind == TokKind::Newline) {
    next();
    return;
  }
  if (peek().kind == TokKind::End || peek().kind == TokKind::Dedent) return;
  fail_expected("end of line");
}

void Parser::statement(std::vector<StmtPtr>& out) {
  const Token& t = peek();
  if (t.is_name("def")) {
    out.push_back(function_def());
    return;
  }
  static const std::set<std::string> kCompound = {"if", "for", "while", "with", "try", "class", "async"};
  if (t.kind == TokKind::Name && kCompound.count(t.text)) {
    out.push_back(skipped_compound());
    return;
  }
  if (t.is_op("@")) {
    auto s = std::make_unique<Stmt>(StmtKind::Unsupported, t.loc);
    s->text = "decorator";
    while (at_op("@")) skip_line();
    if (at_kw("def") || at_kw("class") || at_kw("async")) skip_compound_rest();
    out.push_back(std::move(s));
    return;
  }
  simple_statements(out);
}

void Parser::simple_statements(std::vector<StmtPtr>& out) {
  while (true) {
    out.push_back(small_statement());
    if (!accept_op(";")) break;
    if (peek().kind == TokKind::Newline || peek().kind == TokKind::End) break;
  }
  expect_end_of_statement();
}

StmtPtr Parser::small_statement() {
  const Token& t = peek();
  SourceLoc loc = t.loc;
  if (accept_kw("pass")) return std::make_unique<Stmt>(StmtKind::Pass, loc);
  if (accept_kw("return")) {
    auto s = std::make_unique<Stmt>(StmtKind::Return, loc);
    if (!at_statement_end()) s->value = testlist(false);
    return s;
  }
  if (at_kw("import")) return import_stmt();
  if (at_kw("from")) return from_import_stmt();
  if (accept_kw("assert")) {
    auto s = std::make_unique<Stmt>(StmtKind::Assert, loc);
    s->value = expression();
    if (accept_op(",")) s->annotation = expression();
    return s;
  }
  static const std::set<std::string> kRefused = {"global", "nonlocal", "del", "raise", "break", "continue", "yield"};
  if (t.kind == TokKind::Name && kRefused.count(t.text)) {
    auto s = std::make_unique<Stmt>(StmtKind::Unsupported, loc);
    s->text = t.text;
    int depth = 0;
    while (peek().kind != TokKind::End) {
      if (peek().kind == TokKind::Newline && depth == 0) break;
      if (depth == 0 && at_op(";")) break;
      if (at_op("(") || at_op("[") || at_op("{")) ++depth;
      if (at_op(")") || at_op("]") || at_op("}")) --depth;
      next();
    }
    return s;
  }
  ExprPtr first = testlist(true);
  if (at_op("=")) {
    auto s = std::make_unique<Stmt>(StmtKind::Assign, loc);
    check_target(*first);
    s->targets.push_back(std::move(first));
    while (accept_op("=")) {
      ExprPtr e = testlist(true);
      if (at_op("=")) {
        check_target(*e);
        s->targets.push_back(std::move(e));
      } else {
        s->value = std::move(e);
      }
    }
    if (!s->value) fail_expected("an expression after '='");
    return s;
  }
  static const char* const kAug[] = {"+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=", "<<=", ">>="};
  for (const char* op : kAug) {
    if (at_op(op)) {
      auto s = std::make_unique<Stmt>(StmtKind::AugAssign, peek().loc);
      next();
      if (first->kind != ExprKind::Name && first->kind != ExprKind::Attribute && first->kind != ExprKind::Subscript)
        fail_at(first->loc, "'" + describe_target(*first) + "' is an illegal expression for augmented assignment");
      std::string spelled = op;
      s->text = spelled.substr(0, spelled.size() - 1);
      s->targets.push_back(std::move(first));
      s->value = testlist(false);
      return s;
    }
  }
  if (at_op(":")) {
    next();
    auto s = std::make_unique<Stmt>(StmtKind::AnnAssign, loc);
    if (first->kind != ExprKind::Name && first->kind != ExprKind::Attribute && first->kind != ExprKind::Subscript)
      fail_at(first->loc, "only single target (not " + describe_target(*first) + ") can be annotated");
    s->targets.push_back(std::move(first));
    s->annotation = expression();
    if (accept_op("=")) s->value = testlist(false);
    return s;
  }
  auto s = std::make_unique<Stmt>(StmtKind::ExprStmt, loc);
  s->value = std::move(first);
  return s;
}

bool Parser::at_statement_end() const {
  return peek().kind == TokKind::Newline || peek().kind == TokKind::End || peek().kind == TokKind::Dedent ||
         at_op(";");
}

std::string Parser::describe_target(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Call: return "function call";
    case ExprKind::Int: case ExprKind::Float: case ExprKind::Str: case ExprKind::Bool:
    case ExprKind::NoneLit: case ExprKind::EllipsisLit: return "literal";
    case ExprKind::Compare: return "comparison";
    case ExprKind::Tuple: return "tuple";
    case ExprKind::List: return "list";
    default: return "expression";
  }
}

void Parser::check_target(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Name:
      if (is_keyword(e.text)) fail_at(e.loc, "cannot assign to keyword '" + e.text + "'");
      return;
    case ExprKind::Attribute:
    case ExprKind::Subscript:
      return;
    case ExprKind::Starred:
      check_target(*e.items[0]);
      return;
    case ExprKind::Tuple:
    case ExprKind::List: {
      int starred = 0;
      for (const auto& item : e.items) {
        if (item->kind == ExprKind::Starred && ++starred > 1)
          fail_at(item->loc, "multiple starred expressions in assignment");
        check_target(*item);
      }
      return;
    }
    default:
      fail_at(e.loc, "cannot assign to " + describe_target(e));
  }
}

StmtPtr Parser::import_stmt() {
  auto s = std::make_unique<Stmt>(StmtKind::Import, next().loc);
  do {
    ImportName n;
    n.loc = peek().loc;
    n.name = dotted_name();
    if (accept_kw("as")) n.asname = expect_name("a name after 'as'").text;
    s->names.push_back(std::move(n));
  } while (accept_op(","));
  return s;
}

std::string Parser::dotted_name() {
  std::string name = expect_name("a module name").text;
  while (accept_op(".")) name += "." + expect_name("a name after '.'").text;
  return name;
}

StmtPtr Parser::from_import_stmt() {
  auto s = std::make_unique<Stmt>(StmtKind::ImportFrom, next().loc);
  std::string dots;
  while (at_op(".") || at_op("...")) dots += next().text;
  s->module = dots + (at_kw("import") && !dots.empty() ? "" : dotted_name());
  if (!accept_kw("import")) fail_expected("'import'");
  if (at_op("*")) {
    ImportName n;
    n.loc = next().loc;
    n.name = "*";
    s->names.push_back(std::move(n));
    return s;
  }
  bool paren = accept_op("(");
  do {
    if (paren && at_op(")")) break;
    ImportName n;
    n.loc = peek().loc;
    n.name = expect_name("a name to import").text;
    if (accept_kw("as")) n.asname = expect_name("a name after 'as'").text;
    s->names.push_back(std::move(n));
  } while (accept_op(","));
  if (paren) expect_op(")", "to close the import list");
  return s;
}

std::unique_ptr<Stmt> Parser::function_def() {
  SourceLoc def_loc = next().loc;
  auto f = std::make_unique<FuncDef>();
  const Token& name = expect_name("a function name after 'def'");
  f->name = name.text;
  f->loc = name.loc;
  expect_op("(", "after the function name");
  bool keyword_only = false, seen_default = false;
  std::set<std::string> names;
  while (!at_op(")")) {
    if (accept_op("/")) {
      if (!at_op(")")) expect_op(",", "after '/'");
      continue;
    }
    if (at_op("**") || (at_op("*") && peek(1).kind == TokKind::Name))
      fail_unsupported_at(peek().loc, "variadic parameters (*args, **kwargs) are not supported");
    if (accept_op("*")) {
      keyword_only = true;
      if (!at_op(")")) expect_op(",", "after '*'");
      continue;
    }
    Param p;
    const Token& pn = expect_name("a parameter name");
    p.name = pn.text;
    p.loc = pn.loc;
    if (!names.insert(p.name).second) fail_at(p.loc, "duplicate argument '" + p.name + "' in function definition");
    if (accept_op(":")) p.annotation = expression();
    if (accept_op("=")) {
      p.default_value = expression();
      seen_default = true;
    } else if (seen_default && !keyword_only) {
      fail_at(p.loc, "parameter without a default follows parameter with a default");
    }
    p.keyword_only = keyword_only;
    f->params.push_back(std::move(p));
    if (!at_op(")")) expect_op(",", "or ')' after a parameter");
  }
  next();
  if (accept_op("->")) f->returns = expression();
  expect_op(":", "after the function signature");
  block(f->body, "function definition on line " + std::to_string(def_loc.line));
  auto s = std::make_unique<Stmt>(StmtKind::FunctionDef, def_loc);
  s->func = std::move(f);
  return s;
}

void Parser::block(std::vector<StmtPtr>& body, const std::string& owner) {
  if (peek().kind != TokKind::Newline) {
    simple_statements(body);
    return;
  }
  next();
  if (peek().kind != TokKind::Indent) fail_at(peek().loc, "expected an indented block after " + owner);
  next();
  while (peek().kind != TokKind::Dedent && peek().kind != TokKind::End) {
    if (peek().kind == TokKind::Newline) {
      next();
      continue;
    }
    if (peek().kind == TokKind::Indent) fail_at(peek().loc, "unexpected indent");
    statement(body);
  }
  if (peek().kind == TokKind::Dedent) next();
}

void Parser::skip_line() {
  int depth = 0;
  while (peek().kind != TokKind::End) {
    if (at_op("(") || at_op("[") || at_op("{")) ++depth;
    if (at_op(")") || at_op("]") || at_op("}")) --depth;
    if (peek().kind == TokKind::Newline && depth == 0) {
      next();
      return;
    }
    next();
  }
}

void Parser::skip_compound_rest() {
  int depth = 0;
  while (peek().kind != TokKind::End) {
    if (at_op("(") || at_op("[") || at_op("{")) ++depth;
    if (at_op(")") || at_op("]") || at_op("}")) --depth;
    if (depth == 0 && at_op(":")) break;
    if (depth == 0 && peek().kind == TokKind::Newline) fail_expected("':'");
    next();
  }
  expect_op(":");
  if (peek().kind != TokKind::Newline) {
    skip_line();
    return;
  }
  next();
  if (peek().kind != TokKind::Indent) fail_at(peek().loc, "expected an indented block");
  next();
  int level = 1;
  while (level > 0 && peek().kind != TokKind::End) {
    if (peek().kind == TokKind::Indent) ++level;
    if (peek().kind == TokKind::Dedent) --level;
    next();
  }
}

StmtPtr Parser::skipped_compound() {
  const Token& kw = peek();
  auto s = std::make_unique<Stmt>(StmtKind::Unsupported, kw.loc);
  s->text = kw.text;
  if (kw.text == "if") {
    next();
    s->value = expression();
    skip_compound_rest_after_test();
  } else {
    skip_compound_rest();
  }
  while (at_kw("elif") || at_kw("else") || at_kw("except") || at_kw("finally")) skip_compound_rest();
  return s;
}

void Parser::skip_compound_rest_after_test() {
  if (!at_op(":")) fail_expected("':' after the if condition");
  skip_compound_rest();
}

Module parse_module(const std::string& path, const std::vector<Token>& tokens) {
  return Parser(path, tokens).parse();
}

}  // namespace axon::frontend
