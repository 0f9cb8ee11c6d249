#include "tile/value.h"

#include <stdexcept>

#include "ir/op.h"
#include "ir/printer.h"

namespace axon::tile {

struct Value::Node {
  ValueKind kind = ValueKind::Apply;
  ir::DType dtype = ir::DType::F32;
  int buffer = -1;
  std::vector<Index> idx;
  ir::Node op{};
  std::vector<Value> args;
  Index index;
};

Value Value::load(int buffer, std::vector<Index> idx, ir::DType dtype) {
  auto n = std::make_shared<Node>();
  n->kind = ValueKind::Load;
  n->buffer = buffer;
  n->idx = std::move(idx);
  n->dtype = dtype;
  return Value(std::move(n));
}

Value Value::apply(const ir::Node& op, std::vector<Value> args) {
  auto n = std::make_shared<Node>();
  n->kind = ValueKind::Apply;
  n->op = op;
  n->op.args.clear();
  n->dtype = op.type.dtype;
  n->args = std::move(args);
  return Value(std::move(n));
}

Value Value::constant(double v, ir::DType dtype) {
  ir::Node c{};
  c.op = ir::Op::Constant;
  c.type = ir::Type{dtype, {}};
  c.attrs.value = v;
  return apply(c, {});
}

Value Value::index_of(const Index& i) {
  auto n = std::make_shared<Node>();
  n->kind = ValueKind::IndexOf;
  n->dtype = ir::DType::I64;
  n->index = i;
  return Value(std::move(n));
}

ValueKind Value::kind() const { return n_->kind; }
ir::DType Value::dtype() const { return n_->dtype; }
int Value::buffer() const { return n_->buffer; }
const std::vector<Index>& Value::idx() const { return n_->idx; }
const ir::Node& Value::op() const { return n_->op; }
const std::vector<Value>& Value::args() const { return n_->args; }
const Index& Value::index() const { return n_->index; }

Value Value::substitute(const std::function<std::optional<Index>(const std::string&)>& f) const {
  switch (kind()) {
    case ValueKind::Load: {
      std::vector<Index> idx;
      for (const Index& i : n_->idx) idx.push_back(i.substitute(f));
      return load(buffer(), std::move(idx), dtype());
    }
    case ValueKind::IndexOf: return index_of(index().substitute(f));
    case ValueKind::Apply: {
      std::vector<Value> args;
      for (const Value& a : n_->args) args.push_back(a.substitute(f));
      return apply(op(), std::move(args));
    }
  }
  return *this;
}

Value Value::map_indices(const std::function<Index(const Index&)>& f) const {
  switch (kind()) {
    case ValueKind::Load: {
      std::vector<Index> idx;
      for (const Index& i : n_->idx) idx.push_back(f(i));
      return load(buffer(), std::move(idx), dtype());
    }
    case ValueKind::IndexOf: return index_of(f(index()));
    case ValueKind::Apply: {
      std::vector<Value> args;
      for (const Value& a : n_->args) args.push_back(a.map_indices(f));
      return apply(op(), std::move(args));
    }
  }
  return *this;
}

Value Value::replace_loads(const std::function<std::optional<Value>(const Value& load)>& f) const {
  switch (kind()) {
    case ValueKind::Load: {
      std::optional<Value> r = f(*this);
      return r ? *r : *this;
    }
    case ValueKind::IndexOf: return *this;
    case ValueKind::Apply: {
      std::vector<Value> args;
      for (const Value& a : n_->args) args.push_back(a.replace_loads(f));
      return apply(op(), std::move(args));
    }
  }
  return *this;
}

void Value::visit_loads(const std::function<void(const Value& load)>& f) const {
  if (kind() == ValueKind::Load) f(*this);
  if (kind() == ValueKind::Apply)
    for (const Value& a : n_->args) a.visit_loads(f);
}

bool Value::uses(const std::string& v) const {
  switch (kind()) {
    case ValueKind::Load:
      for (const Index& i : n_->idx)
        if (i.uses(v)) return true;
      return false;
    case ValueKind::IndexOf: return index().uses(v);
    case ValueKind::Apply:
      for (const Value& a : n_->args)
        if (a.uses(v)) return true;
      return false;
  }
  return false;
}

bool Value::uses_buffer(int b) const {
  bool found = false;
  visit_loads([&](const Value& l) { found |= l.buffer() == b; });
  return found;
}

int Value::expensive_ops() const {
  if (kind() != ValueKind::Apply) return 0;
  int n = (ir::has_property(op().op, ir::Transcendental) || op().op == ir::Op::Div) ? 1 : 0;
  for (const Value& a : n_->args) n += a.expensive_ops();
  return n;
}

std::string Value::str(const std::function<std::string(int)>& buffer_name) const {
  switch (kind()) {
    case ValueKind::Load: {
      std::string s = buffer_name(buffer()) + "[";
      for (size_t i = 0; i < n_->idx.size(); ++i) s += (i ? ", " : "") + n_->idx[i].str();
      return s + "]";
    }
    case ValueKind::IndexOf: return "index(" + index().str() + ")";
    case ValueKind::Apply: {
      if (op().op == ir::Op::Constant) {
        std::string s = ir::double_str(op().attrs.value);
        return op().type.dtype == ir::DType::F32 ? s : s + ":" + ir::dtype_name(op().type.dtype);
      }
      std::string s = ir::op_name(op().op);
      if (op().op == ir::Op::Cast) s += "<" + std::string(ir::dtype_name(op().type.dtype)) + ">";
      s += "(";
      for (size_t i = 0; i < n_->args.size(); ++i) s += (i ? ", " : "") + n_->args[i].str(buffer_name);
      return s + ")";
    }
  }
  return "?";
}

}  // namespace axon::tile
