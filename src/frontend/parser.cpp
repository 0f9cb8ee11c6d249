#include "frontend/parser.h"

#include <set>

namespace axon::frontend {

namespace {

class Parser {
 public:
  Parser(const std::string& path, const std::vector<Token>& tokens) : path_(path), t_(tokens) {
    AXON_CHECK(!t_.empty() && t_.back().kind == TokKind::End) << "token stream must end with End";
  }

  Module parse() {
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

 private:
  // ---- token access ----
  const Token& peek(size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  const Token& next() {
    const Token& t = t_[p_];
    if (p_ + 1 < t_.size()) ++p_;
    return t;
  }
  bool at_op(const char* op) const { return peek().is_op(op); }
  bool at_kw(const char* kw) const { return peek().is_name(kw); }
  bool accept_op(const char* op) {
    if (!at_op(op)) return false;
    next();
    return true;
  }
  bool accept_kw(const char* kw) {
    if (!at_kw(kw)) return false;
    next();
    return true;
  }
  [[noreturn]] void fail_expected(const std::string& what) {
    fail_at(peek().loc, "expected " + what + ", got " + describe_token(peek()));
  }
  const Token& expect_op(const char* op, const std::string& context = "") {
    if (!at_op(op)) fail_expected(std::string("'") + op + "'" + (context.empty() ? "" : " " + context));
    return next();
  }
  const Token& expect_name(const std::string& what) {
    if (peek().kind != TokKind::Name || is_keyword(peek().text)) fail_expected(what);
    return next();
  }
  void expect_end_of_statement() {
    if (peek().kind == TokKind::Newline) {
      next();
      return;
    }
    if (peek().kind == TokKind::End || peek().kind == TokKind::Dedent) return;
    fail_expected("end of line");
  }

  // ---- statements ----
  void statement(std::vector<StmtPtr>& out) {
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

  void simple_statements(std::vector<StmtPtr>& out) {
    while (true) {
      out.push_back(small_statement());
      if (!accept_op(";")) break;
      if (peek().kind == TokKind::Newline || peek().kind == TokKind::End) break;
    }
    expect_end_of_statement();
  }

  StmtPtr small_statement() {
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

  bool at_statement_end() const {
    return peek().kind == TokKind::Newline || peek().kind == TokKind::End || peek().kind == TokKind::Dedent ||
           at_op(";");
  }

  static std::string describe_target(const Expr& e) {
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

  void check_target(const Expr& e) {
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

  StmtPtr import_stmt() {
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

  std::string dotted_name() {
    std::string name = expect_name("a module name").text;
    while (accept_op(".")) name += "." + expect_name("a name after '.'").text;
    return name;
  }

  StmtPtr from_import_stmt() {
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

  std::unique_ptr<Stmt> function_def() {
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

  void block(std::vector<StmtPtr>& body, const std::string& owner) {
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

  // ---- skipping refused compound statements ----
  void skip_line() {
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

  // Skips a header up to its ':' and the block after it.
  void skip_compound_rest() {
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

  StmtPtr skipped_compound() {
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

  void skip_compound_rest_after_test() {
    if (!at_op(":")) fail_expected("':' after the if condition");
    skip_compound_rest();
  }

  // ---- expressions ----
  ExprPtr make(ExprKind k, const SourceLoc& loc) { return std::make_unique<Expr>(k, loc); }

  // An expression list: "a", "a, b", "a, b," (a Tuple when there is a comma).
  ExprPtr testlist(bool allow_star) {
    SourceLoc loc = peek().loc;
    ExprPtr first = star_or_expression(allow_star);
    if (!at_op(",")) return first;
    auto tuple = make(ExprKind::Tuple, loc);
    tuple->items.push_back(std::move(first));
    while (accept_op(",")) {
      if (at_statement_end() || at_op("=") || at_op(")")) break;
      tuple->items.push_back(star_or_expression(allow_star));
    }
    return tuple;
  }

  ExprPtr star_or_expression(bool allow_star) {
    if (allow_star && at_op("*")) {
      auto s = make(ExprKind::Starred, next().loc);
      s->items.push_back(bitor_expr());
      return s;
    }
    return expression();
  }

  ExprPtr expression() {
    if (at_kw("lambda")) fail_unsupported_at(peek().loc, "lambda expressions are not supported; define a function");
    if (at_kw("yield")) fail_unsupported_at(peek().loc, "yield is not supported");
    ExprPtr e = or_test();
    if (at_kw("if")) {
      auto c = make(ExprKind::IfExp, e->loc);
      c->op_loc = next().loc;
      ExprPtr test = or_test();
      if (!accept_kw("else")) fail_expected("'else' in the conditional expression");
      ExprPtr other = expression();
      c->items.push_back(std::move(test));
      c->items.push_back(std::move(e));
      c->items.push_back(std::move(other));
      e = std::move(c);
    }
    if (at_op(":=")) fail_unsupported_at(peek().loc, "assignment expressions (:=) are not supported");
    return e;
  }

  ExprPtr bool_chain(const char* word, ExprPtr (Parser::*sub)()) {
    ExprPtr e = (this->*sub)();
    if (!at_kw(word)) return e;
    auto b = make(ExprKind::BoolOp, e->loc);
    b->op_loc = peek().loc;
    b->text = word;
    b->items.push_back(std::move(e));
    while (accept_kw(word)) b->items.push_back((this->*sub)());
    return b;
  }
  ExprPtr or_test() { return bool_chain("or", &Parser::and_test); }
  ExprPtr and_test() { return bool_chain("and", &Parser::not_test); }
  ExprPtr not_test() {
    if (at_kw("not")) {
      auto u = make(ExprKind::Unary, next().loc);
      u->text = "not";
      u->items.push_back(not_test());
      return u;
    }
    return comparison();
  }

  bool compare_op(std::string* op) {
    static const char* const kOps[] = {"<", ">", "==", ">=", "<=", "!="};
    for (const char* o : kOps)
      if (at_op(o)) {
        *op = o;
        next();
        return true;
      }
    if (at_kw("in")) {
      next();
      *op = "in";
      return true;
    }
    if (at_kw("not") && peek(1).is_name("in")) {
      next();
      next();
      *op = "not in";
      return true;
    }
    if (at_kw("is")) {
      next();
      *op = accept_kw("not") ? "is not" : "is";
      return true;
    }
    return false;
  }

  ExprPtr comparison() {
    ExprPtr e = bitor_expr();
    SourceLoc loc = peek().loc;
    std::string op;
    if (!compare_op(&op)) return e;
    auto c = make(ExprKind::Compare, e->loc);
    c->op_loc = loc;
    c->items.push_back(std::move(e));
    do {
      c->ops.push_back(CompareOp{op, loc});
      c->items.push_back(bitor_expr());
      loc = peek().loc;
    } while (compare_op(&op));
    return c;
  }

  ExprPtr binary_chain(std::initializer_list<const char*> ops, ExprPtr (Parser::*sub)()) {
    ExprPtr e = (this->*sub)();
    while (true) {
      const char* found = nullptr;
      for (const char* o : ops)
        if (at_op(o)) found = o;
      if (!found) return e;
      auto b = make(ExprKind::Binary, e->loc);
      b->op_loc = next().loc;
      b->text = found;
      b->items.push_back(std::move(e));
      b->items.push_back((this->*sub)());
      e = std::move(b);
    }
  }
  ExprPtr bitor_expr() { return binary_chain({"|"}, &Parser::bitxor_expr); }
  ExprPtr bitxor_expr() { return binary_chain({"^"}, &Parser::bitand_expr); }
  ExprPtr bitand_expr() { return binary_chain({"&"}, &Parser::shift_expr); }
  ExprPtr shift_expr() { return binary_chain({"<<", ">>"}, &Parser::arith_expr); }
  ExprPtr arith_expr() { return binary_chain({"+", "-"}, &Parser::term); }
  ExprPtr term() { return binary_chain({"*", "/", "//", "%", "@"}, &Parser::factor); }

  ExprPtr factor() {
    if (at_op("-") || at_op("+") || at_op("~")) {
      auto u = make(ExprKind::Unary, peek().loc);
      u->text = next().text;
      u->items.push_back(factor());
      return u;
    }
    return power();
  }

  ExprPtr power() {
    if (at_kw("await")) fail_unsupported_at(peek().loc, "await is not supported");
    ExprPtr base = primary();
    if (!at_op("**")) return base;
    auto b = make(ExprKind::Binary, base->loc);
    b->op_loc = next().loc;
    b->text = "**";
    b->items.push_back(std::move(base));
    b->items.push_back(factor());  // right-associative; admits 2 ** -1
    return b;
  }

  ExprPtr primary() {
    ExprPtr e = atom();
    while (true) {
      if (at_op(".")) {
        next();
        const Token& name = expect_name("an attribute name after '.'");
        auto a = make(ExprKind::Attribute, e->loc);
        a->op_loc = name.loc;
        a->text = name.text;
        a->items.push_back(std::move(e));
        e = std::move(a);
      } else if (at_op("(")) {
        auto c = make(ExprKind::Call, e->loc);
        c->op_loc = next().loc;
        c->items.push_back(std::move(e));
        call_arguments(*c);
        e = std::move(c);
      } else if (at_op("[")) {
        auto s = make(ExprKind::Subscript, e->loc);
        s->op_loc = next().loc;
        s->items.push_back(std::move(e));
        s->items.push_back(subscript_list());
        expect_op("]", "to close the subscript");
        e = std::move(s);
      } else {
        return e;
      }
    }
  }

  void call_arguments(Expr& call) {
    while (!at_op(")")) {
      if (at_op("*") || at_op("**"))
        fail_unsupported_at(peek().loc, "argument unpacking (*args, **kwargs) is not supported");
      if (peek().kind == TokKind::Name && peek(1).is_op("=") && !is_keyword(peek().text)) {
        Keyword k;
        k.name = peek().text;
        k.loc = next().loc;
        next();
        for (const Keyword& other : call.keywords)
          if (other.name == k.name) fail_at(k.loc, "keyword argument repeated: " + k.name);
        k.value = expression();
        call.keywords.push_back(std::move(k));
      } else {
        if (!call.keywords.empty()) fail_at(peek().loc, "positional argument follows keyword argument");
        call.items.push_back(expression());
        if (at_kw("for")) fail_unsupported_at(peek().loc, "generator expressions are not supported");
      }
      if (!at_op(")")) expect_op(",", "or ')' in the argument list");
    }
    next();
  }

  ExprPtr subscript_list() {
    SourceLoc loc = peek().loc;
    ExprPtr first = subscript_item();
    if (!at_op(",")) return first;
    auto tuple = make(ExprKind::Tuple, loc);
    tuple->items.push_back(std::move(first));
    while (accept_op(",")) {
      if (at_op("]")) break;
      tuple->items.push_back(subscript_item());
    }
    return tuple;
  }

  ExprPtr subscript_item() {
    SourceLoc loc = peek().loc;
    ExprPtr lower;
    if (!at_op(":")) {
      lower = expression();
      if (!at_op(":")) return lower;
    }
    auto s = make(ExprKind::Slice, loc);
    s->op_loc = next().loc;
    ExprPtr upper, step;
    if (!at_op(":") && !at_op("]") && !at_op(",")) upper = expression();
    if (accept_op(":") && !at_op("]") && !at_op(",")) step = expression();
    s->items.push_back(std::move(lower));
    s->items.push_back(std::move(upper));
    s->items.push_back(std::move(step));
    return s;
  }

  ExprPtr atom() {
    const Token& t = peek();
    switch (t.kind) {
      case TokKind::Int: {
        auto e = make(ExprKind::Int, t.loc);
        e->int_value = next().int_value;
        return e;
      }
      case TokKind::Float: {
        auto e = make(ExprKind::Float, t.loc);
        e->float_value = next().float_value;
        return e;
      }
      case TokKind::Imag:
        fail_unsupported_at(t.loc, "complex numbers are not supported");
      case TokKind::String: {
        auto e = make(ExprKind::Str, t.loc);
        while (peek().kind == TokKind::String) {
          const Token& s = next();
          e->text += s.text;
          if (s.prefix.find('f') != std::string::npos) e->is_fstring = true;
          if (s.prefix.find('b') != std::string::npos) e->is_bytes = true;
        }
        return e;
      }
      case TokKind::Name:
        return name_atom();
      case TokKind::Op:
        break;
      default:
        fail_expected("an expression");
    }
    if (t.is_op("...")) {
      next();
      return make(ExprKind::EllipsisLit, t.loc);
    }
    if (t.is_op("(")) return paren_atom();
    if (t.is_op("[")) {
      auto list = make(ExprKind::List, next().loc);
      while (!at_op("]")) {
        list->items.push_back(star_or_expression(true));
        if (at_kw("for")) fail_unsupported_at(peek().loc, "list comprehensions are not supported");
        if (!at_op("]")) expect_op(",", "or ']' in the list");
      }
      next();
      return list;
    }
    if (t.is_op("{")) fail_unsupported_at(t.loc, "dict and set displays are not supported");
    fail_expected("an expression");
  }

  ExprPtr name_atom() {
    const Token& t = peek();
    if (t.text == "True" || t.text == "False") {
      auto e = make(ExprKind::Bool, next().loc);
      e->int_value = t.text == "True";
      return e;
    }
    if (t.text == "None") return make(ExprKind::NoneLit, next().loc);
    if (is_keyword(t.text)) fail_expected("an expression");
    auto e = make(ExprKind::Name, t.loc);
    e->text = next().text;
    return e;
  }

  ExprPtr paren_atom() {
    SourceLoc open = next().loc;
    if (accept_op(")")) return make(ExprKind::Tuple, open);
    ExprPtr first = star_or_expression(true);
    if (at_kw("for")) fail_unsupported_at(peek().loc, "generator expressions are not supported");
    if (accept_op(")")) return first;
    auto tuple = make(ExprKind::Tuple, open);
    tuple->items.push_back(std::move(first));
    while (accept_op(",")) {
      if (at_op(")")) break;
      tuple->items.push_back(star_or_expression(true));
    }
    expect_op(")", "to close the '(' on line " + std::to_string(open.line));
    return tuple;
  }

  std::string path_;
  const std::vector<Token>& t_;
  size_t p_ = 0;
};

}  // namespace

Module parse_module(const std::string& path, const std::vector<Token>& tokens) {
  return Parser(path, tokens).parse();
}

}  // namespace axon::frontend
