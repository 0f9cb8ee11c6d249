// The syntax tree of a spec: the Python subset the parser (parser.h) accepts.
//
// Expressions and statements are plain tagged structs owned through
// unique_ptr. Every node records `loc`, where it starts, and `op_loc`, the
// token that names what it does (the operator of a binary expression, the
// attribute name after a dot, the '[' of a subscript, the '(' of a call);
// diagnostics about a node point at one of the two. Statements the subset
// refuses (if/for/while/...) are kept as Stmt::Unsupported with their
// keyword, so that only code that actually runs is rejected.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/diagnostic.h"

namespace axon::frontend {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
  Name,       // text
  Int,        // int_value
  Float,      // float_value
  Str,        // text (adjacent literals joined); is_fstring / is_bytes flag prefixes axon refuses
  Bool,       // int_value 0 or 1
  NoneLit,
  EllipsisLit,
  Tuple,      // items
  List,       // items
  Attribute,  // items[0] . text
  Subscript,  // items[0] [ items[1] ]   (a multi-index is a Tuple)
  Slice,      // items[0] : items[1] : items[2], each possibly null
  Call,       // items[0] ( items[1..] , keywords )
  Unary,      // text in {"-", "+", "~", "not"} items[0]
  Binary,     // items[0] text items[1]; text is the operator spelling, "@" and "**" included
  Compare,    // items[0] ops[0] items[1] ops[1] items[2] ...
  BoolOp,     // text in {"and", "or"} over items (two or more)
  IfExp,      // items[1] if items[0] else items[2]
  Starred,    // *items[0], only valid as an assignment target
};

struct Keyword {
  std::string name;
  SourceLoc loc;  // of the name
  ExprPtr value;
};

struct CompareOp {
  std::string op;  // "<", "<=", "==", "!=", ">", ">=", "is", "is not", "in", "not in"
  SourceLoc loc;
};

struct Expr {
  ExprKind kind;
  SourceLoc loc;
  SourceLoc op_loc;
  std::string text;
  int64_t int_value = 0;
  double float_value = 0;
  bool is_fstring = false;
  bool is_bytes = false;
  std::vector<ExprPtr> items;
  std::vector<Keyword> keywords;
  std::vector<CompareOp> ops;

  Expr(ExprKind k, SourceLoc l) : kind(k), loc(l), op_loc(std::move(l)) {}
};

struct FuncDef;
struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct Param {
  std::string name;
  SourceLoc loc;
  ExprPtr annotation;  // may be null
  ExprPtr default_value;  // may be null
  bool keyword_only = false;
};

struct FuncDef {
  std::string name;
  SourceLoc loc;  // of the name
  std::vector<Param> params;
  ExprPtr returns;  // the "-> ..." annotation, may be null
  std::vector<StmtPtr> body;
};

struct ImportName {
  std::string name;    // "numpy" (import) or the imported member (from-import)
  std::string asname;  // empty when no "as"
  SourceLoc loc;
};

enum class StmtKind {
  ExprStmt,     // value
  Assign,       // targets = value (a = b = value has two targets)
  AugAssign,    // targets[0] text= value, text the operator without "="
  AnnAssign,    // targets[0] : annotation [= value]
  Return,       // value may be null
  Pass,
  FunctionDef,  // func
  Import,       // names
  ImportFrom,   // module, names ("*" for a star import)
  Assert,       // value = test, annotation = message (may be null)
  Unsupported,  // text = the keyword (if, for, while, with, try, class, ...); value = if-test when any
};

struct Stmt {
  StmtKind kind;
  SourceLoc loc;
  std::string text;
  std::vector<ExprPtr> targets;
  ExprPtr value;
  ExprPtr annotation;
  std::unique_ptr<FuncDef> func;
  std::string module;
  std::vector<ImportName> names;

  Stmt(StmtKind k, SourceLoc l) : kind(k), loc(std::move(l)) {}
};

struct Module {
  std::string path;
  std::vector<StmtPtr> body;
};

}  // namespace axon::frontend
