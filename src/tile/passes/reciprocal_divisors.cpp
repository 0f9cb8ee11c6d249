#include "tile/passes/reciprocal_divisors.h"

#include <string>

namespace axon::tile {

namespace {

bool is_literal(const Value& v, double x) {
  return v.kind() == ValueKind::Apply && v.op().op == ir::Op::Constant && v.op().attrs.value == x;
}

// `v` with every float32 division by a `var`-invariant divisor rewritten.
Value rewrite_value(const Value& v, const std::string& var) {
  if (v.kind() != ValueKind::Apply) return v;
  std::vector<Value> args;
  for (const Value& a : v.args()) args.push_back(rewrite_value(a, var));
  const ir::Node& op = v.op();
  if (op.op == ir::Op::Div && op.type.dtype == ir::DType::F32 && !args[1].uses(var) && !is_literal(args[0], 1.0)) {
    ir::Node mul = op;
    mul.op = ir::Op::Mul;
    Value reciprocal = Value::apply(op, {Value::constant(1.0, ir::DType::F32), args[1]});
    return Value::apply(mul, {args[0], reciprocal});
  }
  return Value::apply(op, std::move(args));
}

// `s`, whose innermost enclosing loop is `loop` (nullptr: none).
Stmt rewrite_stmt(const Stmt& s, const StmtNode* loop) {
  switch (s.kind()) {
    case StmtKind::Seq: {
      std::vector<Stmt> body;
      for (const Stmt& b : s->body) body.push_back(rewrite_stmt(b, loop));
      return s.with([&](StmtNode& n) { n.body = std::move(body); });
    }
    case StmtKind::For: {
      Stmt body = rewrite_stmt(s->body.at(0), &s.node());
      return s.with([&](StmtNode& n) { n.body = {body}; });
    }
    case StmtKind::Store:
    case StmtKind::Accumulate:
    case StmtKind::Rescale:
      if (!loop || loop->loop != LoopKind::Vectorized) return s;
      return s.with([&](StmtNode& n) {
        n.value = rewrite_value(n.value, loop->var);
        if (n.alpha.defined()) n.alpha = rewrite_value(n.alpha, loop->var);
      });
    default: return s;
  }
}

}  // namespace

Kernel reciprocal_divisors(const Kernel& k) {
  Kernel out = k;
  out.body = rewrite_stmt(k.body, nullptr);
  return out;
}

}  // namespace axon::tile
