// The parser's internal state, shared by parser.cpp (module, statements,
// token access) and parse_expr.cpp (expressions). See parser.h for the
// contract; nothing outside those two files includes this header.
#pragma once

#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/token.h"

namespace axon::frontend {

class Parser {
 public:
  Parser(const std::string& path, const std::vector<Token>& tokens) : path_(path), t_(tokens) {
    AXON_CHECK(!t_.empty() && t_.back().kind == TokKind::End) << "token stream must end with End";
  }

  Module parse();

 private:
  // ---- token access ----
  const Token& peek(size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  const Token& next();
  bool at_op(const char* op) const { return peek().is_op(op); }
  bool at_kw(const char* kw) const { return peek().is_name(kw); }
  bool accept_op(const char* op);
  bool accept_kw(const char* kw);
  [[noreturn]] void fail_expected(const std::string& what);
  const Token& expect_op(const char* op, const std::string& context = "");
  const Token& expect_name(const std::string& what);
  void expect_end_of_statement();

  // ---- statements ----
  void statement(std::vector<StmtPtr>& out);
  void simple_statements(std::vector<StmtPtr>& out);
  StmtPtr small_statement();
  bool at_statement_end() const;
  static std::string describe_target(const Expr& e);
  void check_target(const Expr& e);
  StmtPtr import_stmt();
  std::string dotted_name();
  StmtPtr from_import_stmt();
  std::unique_ptr<Stmt> function_def();
  void block(std::vector<StmtPtr>& body, const std::string& owner);

  // ---- skipping refused compound statements ----
  void skip_line();

  // Skips a header up to its ':' and the block after it.
  void skip_compound_rest();
  StmtPtr skipped_compound();
  void skip_compound_rest_after_test();

  // ---- expressions ----
  ExprPtr make(ExprKind k, const SourceLoc& loc) { return std::make_unique<Expr>(k, loc); }

  // An expression list: "a", "a, b", "a, b," (a Tuple when there is a comma).
  ExprPtr testlist(bool allow_star);
  ExprPtr star_or_expression(bool allow_star);
  ExprPtr expression();
  ExprPtr bool_chain(const char* word, ExprPtr (Parser::*sub)());
  ExprPtr or_test() { return bool_chain("or", &Parser::and_test); }
  ExprPtr and_test() { return bool_chain("and", &Parser::not_test); }
  ExprPtr not_test();
  bool compare_op(std::string* op);
  ExprPtr comparison();
  ExprPtr binary_chain(std::initializer_list<const char*> ops, ExprPtr (Parser::*sub)());
  ExprPtr bitor_expr() { return binary_chain({"|"}, &Parser::bitxor_expr); }
  ExprPtr bitxor_expr() { return binary_chain({"^"}, &Parser::bitand_expr); }
  ExprPtr bitand_expr() { return binary_chain({"&"}, &Parser::shift_expr); }
  ExprPtr shift_expr() { return binary_chain({"<<", ">>"}, &Parser::arith_expr); }
  ExprPtr arith_expr() { return binary_chain({"+", "-"}, &Parser::term); }
  ExprPtr term() { return binary_chain({"*", "/", "//", "%", "@"}, &Parser::factor); }

  ExprPtr factor();
  ExprPtr power();
  ExprPtr primary();
  void call_arguments(Expr& call);
  ExprPtr subscript_list();
  ExprPtr subscript_item();
  ExprPtr atom();
  ExprPtr name_atom();
  ExprPtr paren_atom();
  std::string path_;
  const std::vector<Token>& t_;
  size_t p_ = 0;
};

}  // namespace axon::frontend
