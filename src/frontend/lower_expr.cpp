// The lowering's expressions: names, literals, operators, comparisons,
// attributes and subscripts.
#include "frontend/lowerer.h"
#include "frontend/scalar_fold.h"

namespace axon::frontend {

namespace {

const std::map<std::string, NpBinary>& operator_table() {
  static const std::map<std::string, NpBinary> kOps = {
      {"+", NpBinary::Add},     {"-", NpBinary::Sub},      {"*", NpBinary::Mul},    {"/", NpBinary::TrueDiv},
      {"//", NpBinary::FloorDiv}, {"%", NpBinary::Mod},    {"&", NpBinary::BitAnd}, {"|", NpBinary::BitOr},
      {"^", NpBinary::BitXor},  {"<", NpBinary::Lt},       {"<=", NpBinary::Le},    {">", NpBinary::Gt},
      {">=", NpBinary::Ge},     {"==", NpBinary::Eq},      {"!=", NpBinary::Ne},
  };
  return kOps;
}

[[noreturn]] void ambiguous_truth(const SourceLoc& at, const std::string& hint) {
  fail_at(at, "the truth value of an array is ambiguous; " + hint);
}

bool python_equal(const Value& a, const Value& b) {
  if (a.is_scalar() && b.is_scalar()) return a.as_double() == b.as_double() &&
                                             (a.kind == ValueKind::Float || b.kind == ValueKind::Float || a.i == b.i);
  if (a.is_sequence() && b.is_sequence()) {
    if (a.kind != b.kind || a.items.size() != b.items.size()) return false;
    for (size_t k = 0; k < a.items.size(); ++k)
      if (!python_equal(a.items[k], b.items[k])) return false;
    return true;
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ValueKind::None: case ValueKind::Ellipsis: return true;
    case ValueKind::Str: case ValueKind::Module: case ValueKind::Builtin: return a.s == b.s;
    case ValueKind::DType: return a.dtype == b.dtype;
    case ValueKind::Function: return a.func == b.func;
    default: return false;
  }
}

}  // namespace

Value Lowerer::eval(const Expr& e, Scope& scope) {
  switch (e.kind) {
    case ExprKind::Name: {
      auto it = scope.vars.find(e.text);
      if (it != scope.vars.end()) return it->second;
      if (scope.locals && scope.locals->count(e.text))
        fail_at(e.loc, "cannot access local variable '" + e.text + "' where it is not associated with a value");
      if (scope.globals) {
        auto g = scope.globals->vars.find(e.text);
        if (g != scope.globals->vars.end()) return g->second;
      }
      Value b = builtin_value(e.text);
      if (b.kind != ValueKind::None) return b;
      if (e.text == "__name__") return Value::str("__main__");
      fail_at(e.loc, "name '" + e.text + "' is not defined");
    }
    case ExprKind::Int: return Value::integer(e.int_value);
    case ExprKind::Float: return Value::real(e.float_value);
    case ExprKind::Bool: return Value::boolean(e.int_value != 0);
    case ExprKind::NoneLit: return Value::none();
    case ExprKind::EllipsisLit: {
      Value v;
      v.kind = ValueKind::Ellipsis;
      return v;
    }
    case ExprKind::Str:
      if (e.is_fstring) fail_unsupported_at(e.loc, "f-strings are not supported");
      if (e.is_bytes) fail_unsupported_at(e.loc, "bytes literals are not supported");
      return Value::str(e.text);
    case ExprKind::Tuple:
    case ExprKind::List: {
      std::vector<Value> items;
      for (const auto& item : e.items) {
        if (item->kind != ExprKind::Starred) {
          items.push_back(eval(*item, scope));
          continue;
        }
        Value inner = eval(*item->items[0], scope);
        if (!inner.is_sequence())
          fail_unsupported_at(item->loc, "unpacking " + describe(inner, graph_) + " with * is not supported");
        items.insert(items.end(), inner.items.begin(), inner.items.end());
      }
      return Value::tuple(std::move(items), e.kind == ExprKind::Tuple ? ValueKind::Tuple : ValueKind::List);
    }
    case ExprKind::Attribute:
      return get_attribute(eval(*e.items[0], scope), e.text, e.op_loc);
    case ExprKind::Subscript: {
      Value obj = eval(*e.items[0], scope);
      const Expr& ix = *e.items[1];
      std::vector<const Expr*> parts;
      if (ix.kind == ExprKind::Tuple)
        for (const auto& p : ix.items) parts.push_back(p.get());
      else
        parts.push_back(&ix);
      std::vector<Value> items;
      std::vector<SourceLoc> locs;
      for (const Expr* p : parts) {
        locs.push_back(p->loc);
        if (p->kind != ExprKind::Slice) {
          items.push_back(eval(*p, scope));
          continue;
        }
        Value sl;
        sl.kind = ValueKind::Slice;
        for (const auto& bound : p->items) sl.items.push_back(bound ? eval(*bound, scope) : Value::none());
        items.push_back(sl);
      }
      Value index = ix.kind == ExprKind::Tuple ? Value::tuple(items) : items[0];
      if (obj.is_tensor()) return Value::tensor(ab_.index(obj.node, index, e.op_loc, locs));
      if (obj.is_sequence() || obj.kind == ValueKind::Str) {
        size_t n = obj.kind == ValueKind::Str ? obj.s.size() : obj.items.size();
        auto element = [&](int64_t k) {
          return obj.kind == ValueKind::Str ? Value::str(obj.s.substr(static_cast<size_t>(k), 1)) : obj.items[k];
        };
        std::string what = obj.kind == ValueKind::Str ? "string" : obj.kind == ValueKind::Tuple ? "tuple" : "list";
        if (index.is_integral()) {
          int64_t k = index.i;
          if (k < -static_cast<int64_t>(n) || k >= static_cast<int64_t>(n))
            fail_at(locs[0], what + " index " + std::to_string(k) + " out of range (length " + std::to_string(n) + ")");
          return element(k < 0 ? k + static_cast<int64_t>(n) : k);
        }
        if (index.kind == ValueKind::Slice) {
          // Reuse the array slicing rules on the positions 0..n-1.
          int64_t bounds[3] = {0, static_cast<int64_t>(n), 1};
          bool given[3];
          for (int p = 0; p < 3; ++p) {
            given[p] = index.items[p].kind != ValueKind::None;
            if (given[p] && !index.items[p].is_integral())
              fail_at(locs[0], "slice indices must be integers or None, got " + describe(index.items[p], graph_));
            if (given[p]) bounds[p] = index.items[p].i;
          }
          int64_t step = bounds[2], len = static_cast<int64_t>(n);
          if (step == 0) fail_at(locs[0], "slice step cannot be zero");
          auto adjust = [&](int p, int64_t dflt) {
            if (!given[p]) return dflt;
            int64_t v = bounds[p];
            if (v < 0) v = std::max<int64_t>(v + len, step < 0 ? -1 : 0);
            else if (v >= len) v = step < 0 ? len - 1 : len;
            return v;
          };
          int64_t start = adjust(0, step < 0 ? len - 1 : 0), stop = adjust(1, step < 0 ? -1 : len);
          std::vector<Value> out;
          std::string text;
          for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) {
            if (obj.kind == ValueKind::Str) text += obj.s[k];
            else out.push_back(obj.items[k]);
          }
          return obj.kind == ValueKind::Str ? Value::str(text) : Value::tuple(out, obj.kind);
        }
        fail_at(locs[0], what + " indices must be integers or slices, not " + describe(index, graph_));
      }
      fail_at(e.op_loc, describe(obj, graph_) + " is not subscriptable");
    }
    case ExprKind::Slice:
      fail_at(e.loc, "a slice is only valid inside []");
    case ExprKind::Call: {
      const Expr& callee_expr = *e.items[0];
      Value callee = eval(callee_expr, scope);
      CallArgs args;
      for (size_t k = 1; k < e.items.size(); ++k) {
        const Expr& a = *e.items[k];
        if (a.kind != ExprKind::Starred) {
          args.positional.push_back(Arg{eval(a, scope), a.loc});
          continue;
        }
        Value seq = eval(*a.items[0], scope);
        if (seq.is_tensor()) {
          for (NodeId row : as_array_list(seq, a.loc, "*")) args.positional.push_back(Arg{Value::tensor(row), a.loc});
        } else if (seq.is_sequence()) {
          for (const Value& v : seq.items) args.positional.push_back(Arg{v, a.items[0]->loc});
        } else {
          fail_at(a.items[0]->loc, "argument after * must be an iterable, not " + describe(seq, graph_));
        }
      }
      for (const Keyword& kw : e.keywords) args.keywords.push_back({kw.name, Arg{eval(*kw.value, scope), kw.value->loc, kw.loc}});
      // Errors about the call as a whole point at the name of what is called.
      SourceLoc at = callee_expr.kind == ExprKind::Attribute ? callee_expr.op_loc : callee_expr.loc;
      return call(callee, args, at);
    }
    case ExprKind::Unary: {
      Value a = eval(*e.items[0], scope);
      if (e.text == "not") {
        if (a.is_tensor()) ambiguous_truth(e.op_loc, "use ~ or np.logical_not for element-wise negation");
        return Value::boolean(!truthy(a));
      }
      if (a.is_scalar()) return fold_unary(e.text, a, e.op_loc);
      if (!a.is_tensor())
        fail_at(e.op_loc, "bad operand type for unary " + e.text + ": " + describe(a, graph_));
      NpUnary op = e.text == "-" ? NpUnary::Neg : e.text == "+" ? NpUnary::Pos : NpUnary::Invert;
      return ab_.unary(op, a, e.op_loc, "unary " + e.text);
    }
    case ExprKind::Binary: {
      Value a = eval(*e.items[0], scope);
      Value b = eval(*e.items[1], scope);
      return binary_op(e.text, a, b, e.op_loc);
    }
    case ExprKind::Compare: {
      Value left = eval(*e.items[0], scope);
      if (e.ops.size() == 1) return compare_op(e.ops[0].op, left, eval(*e.items[1], scope), e.ops[0].loc);
      // a < b < c is (a < b) and (b < c): it needs truth values.
      Value result;
      for (size_t k = 0; k < e.ops.size(); ++k) {
        Value right = eval(*e.items[k + 1], scope);
        result = compare_op(e.ops[k].op, left, right, e.ops[k].loc);
        if (result.is_tensor())
          ambiguous_truth(e.ops[k].loc, "a chained comparison needs it; write (a < b) & (b < c)");
        if (!truthy(result)) return result;
        left = right;
      }
      return result;
    }
    case ExprKind::BoolOp: {
      bool is_and = e.text == "and";
      Value v;
      for (size_t k = 0; k < e.items.size(); ++k) {
        v = eval(*e.items[k], scope);
        if (k + 1 == e.items.size()) break;
        if (v.is_tensor())
          ambiguous_truth(e.op_loc, std::string("use ") + (is_and ? "&" : "|") + " or np.logical_" +
                                        (is_and ? "and" : "or") + " for element-wise logic");
        if (truthy(v) != is_and) break;
      }
      return v;
    }
    case ExprKind::IfExp: {
      Value test = eval(*e.items[0], scope);
      if (test.is_tensor()) ambiguous_truth(e.op_loc, "use np.where(cond, a, b) for an element-wise choice");
      return eval(*e.items[truthy(test) ? 1 : 2], scope);
    }
    case ExprKind::Starred:
      fail_at(e.loc, "can't use starred expression here");
  }
  AXON_CHECK(false) << "unhandled expression kind";
  return {};
}

Value Lowerer::binary_op(const std::string& op, const Value& a_in, const Value& b_in, const SourceLoc& at) {
  Value a = a_in, b = b_in;
  // Python sequences: concatenation and repetition (shape arithmetic such as x.shape[:-1] + (n,)).
  if (!a.is_tensor() && !b.is_tensor()) {
    if (op == "+" && a.is_sequence() && b.is_sequence() && a.kind == b.kind) {
      Value out = a;
      out.items.insert(out.items.end(), b.items.begin(), b.items.end());
      return out;
    }
    if (op == "+" && a.kind == ValueKind::Str && b.kind == ValueKind::Str) return Value::str(a.s + b.s);
    if (op == "*" && (a.is_sequence() || b.is_sequence()) && (a.is_integral() || b.is_integral())) {
      const Value& seq = a.is_sequence() ? a : b;
      int64_t n = a.is_sequence() ? b.i : a.i;
      Value out = seq;
      out.items.clear();
      for (int64_t k = 0; k < n; ++k) out.items.insert(out.items.end(), seq.items.begin(), seq.items.end());
      return out;
    }
  }
  auto python_type = [&](const Value& v) -> std::string {
    if (v.is_tensor()) return ir::type_str(graph_[v.node].type) + " array";
    switch (v.kind) {
      case ValueKind::Bool: return "bool";
      case ValueKind::Int: return "int";
      case ValueKind::Float: return "float";
      case ValueKind::Str: return "str";
      case ValueKind::Tuple: return "tuple";
      case ValueKind::List: return "list";
      case ValueKind::None: return "NoneType";
      default: return describe(v, graph_);
    }
  };
  auto bad_operands = [&]() {
    fail_at(at, "unsupported operand type(s) for " + op + ": '" + python_type(a) + "' and '" + python_type(b) + "'");
  };
  // A list or tuple meeting an array is converted, as numpy does.
  if (a.is_tensor() && b.is_sequence()) b = Value::tensor(as_array(b, at));
  if (b.is_tensor() && a.is_sequence()) a = Value::tensor(as_array(a, at));
  bool a_num = a.is_tensor() || a.is_scalar(), b_num = b.is_tensor() || b.is_scalar();
  if (!a_num || !b_num) bad_operands();
  if (op == "@") {
    if (!a.is_tensor() && !b.is_tensor()) bad_operands();
    NodeId x = as_array(a, at), y = as_array(b, at);
    return Value::tensor(ab_.matmul(x, y, at));
  }
  if (a.is_scalar() && b.is_scalar()) return fold_binary(op, a, b, at);
  if (op == "**") {
    if (!b.is_scalar())
      fail_unsupported_at(at, "** with an array exponent (" + describe(b, graph_) +
                                  ") is not supported; the exponent must be a constant");
    return ab_.power(a, b, at);
  }
  if (op == "<<" || op == ">>") {
    DType dt = ab_.result_type({a, b});
    if (ir::is_float(dt))
      fail_at(at, "operator " + op + " needs bool or integer operands, got " + describe(a, graph_) + " and " +
                      describe(b, graph_));
    fail_unsupported_at(at, "shifts on " + std::string(numpy_dtype_name(dt)) + " arrays are not supported");
  }
  auto it = operator_table().find(op);
  AXON_CHECK(it != operator_table().end()) << "unknown operator " << op;
  return ab_.binary(it->second, a, b, at, op);
}

Value Lowerer::compare_op(const std::string& op, const Value& a, const Value& b, const SourceLoc& at) {
  if (op == "is" || op == "is not") {
    if (a.is_tensor() || b.is_tensor()) {
      bool same = a.is_tensor() && b.is_tensor() && a.node == b.node;
      if (a.kind != ValueKind::None && b.kind != ValueKind::None && !same)
        fail_unsupported_at(at, "'" + op + "' between arrays is not supported");
      return Value::boolean(same == (op == "is"));
    }
    bool same = python_equal(a, b) && a.kind == b.kind;
    return Value::boolean(same == (op == "is"));
  }
  if (op == "in" || op == "not in") {
    if (!b.is_sequence() || a.is_tensor())
      fail_unsupported_at(at, "'" + op + "' is only supported for a value in a tuple or list");
    bool found = false;
    for (const Value& item : b.items) {
      if (item.is_tensor()) fail_unsupported_at(at, "'" + op + "' over arrays is not supported");
      found |= python_equal(a, item);
    }
    return Value::boolean(found == (op == "in"));
  }
  if (a.is_tensor() || b.is_tensor() || (a.is_scalar() && b.is_scalar())) return binary_op(op, a, b, at);
  if (op == "==" || op == "!=") return Value::boolean(python_equal(a, b) == (op == "=="));
  fail_at(at, "'" + op + "' not supported between " + describe(a, graph_) + " and " + describe(b, graph_));
}

Value Lowerer::get_attribute(const Value& obj, const std::string& name, const SourceLoc& at) {
  if (obj.kind == ValueKind::Module) return numpy_attr(name, at);
  if (obj.is_tensor()) return tensor_attr(obj, name, at);
  if (obj.kind == ValueKind::DType) {
    if (name == "itemsize") return Value::integer(ir::dtype_bytes(obj.dtype));
    if (name == "name") return Value::str(numpy_dtype_name(obj.dtype));
    if (name == "type") return obj;
  }
  if (obj.kind == ValueKind::Builtin && obj.s == "finfo") return finfo_attr(obj.dtype, name, at);
  fail_at(at, describe(obj, graph_) + " has no attribute '" + name + "'");
}

}  // namespace axon::frontend
