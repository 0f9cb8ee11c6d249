// The parser: expressions, by precedence climbing from the loosest level down.
#include "frontend/parser_impl.h"

namespace axon::frontend {

ExprPtr Parser::testlist(bool allow_star) {
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

ExprPtr Parser::star_or_expression(bool allow_star) {
  if (allow_star && at_op("*")) {
    auto s = make(ExprKind::Starred, next().loc);
    s->items.push_back(bitor_expr());
    return s;
  }
  return expression();
}

ExprPtr Parser::expression() {
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

ExprPtr Parser::bool_chain(const char* word, ExprPtr (Parser::*sub)()) {
  ExprPtr e = (this->*sub)();
  if (!at_kw(word)) return e;
  auto b = make(ExprKind::BoolOp, e->loc);
  b->op_loc = peek().loc;
  b->text = word;
  b->items.push_back(std::move(e));
  while (accept_kw(word)) b->items.push_back((this->*sub)());
  return b;
}

ExprPtr Parser::not_test() {
  if (at_kw("not")) {
    auto u = make(ExprKind::Unary, next().loc);
    u->text = "not";
    u->items.push_back(not_test());
    return u;
  }
  return comparison();
}

bool Parser::compare_op(std::string* op) {
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

ExprPtr Parser::comparison() {
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

ExprPtr Parser::binary_chain(std::initializer_list<const char*> ops, ExprPtr (Parser::*sub)()) {
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

ExprPtr Parser::factor() {
  if (at_op("-") || at_op("+") || at_op("~")) {
    auto u = make(ExprKind::Unary, peek().loc);
    u->text = next().text;
    u->items.push_back(factor());
    return u;
  }
  return power();
}

ExprPtr Parser::power() {
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

ExprPtr Parser::primary() {
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

void Parser::call_arguments(Expr& call) {
  while (!at_op(")")) {
    if (at_op("**")) fail_unsupported_at(peek().loc, "keyword argument unpacking (**kwargs) is not supported");
    if (at_op("*")) {
      if (!call.keywords.empty()) fail_at(peek().loc, "iterable argument unpacking follows keyword argument unpacking");
      auto star = make(ExprKind::Starred, next().loc);
      star->items.push_back(expression());
      call.items.push_back(std::move(star));
      if (!at_op(")")) expect_op(",", "or ')' in the argument list");
      continue;
    }
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

ExprPtr Parser::subscript_list() {
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

ExprPtr Parser::subscript_item() {
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

ExprPtr Parser::atom() {
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

ExprPtr Parser::name_atom() {
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

ExprPtr Parser::paren_atom() {
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

}  // namespace axon::frontend
