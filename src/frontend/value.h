// What a spec expression evaluates to while it is being lowered.
//
// Python scalars (bool, int, float) stay Python scalars and fold at lowering
// time; they are numpy's "weak" scalars (NEP 50) when they meet an array.
// Arrays are graph nodes (Tensor). Everything else a spec can name — tuples,
// lists, strings, slices, dtypes, the numpy module, helper functions and
// built-in callables — is a Value too, so that `f = np.exp; f(x)` and
// `dt = x.dtype` behave as in Python.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace axon::frontend {

struct FuncDef;

enum class ValueKind {
  None,
  Bool,      // i is 0 or 1
  Int,       // i
  Float,     // f
  Str,       // s
  Tuple,     // items
  List,      // items
  Tensor,    // node
  DType,     // dtype; python_type when spelled float/int/bool
  Slice,     // items = {start, stop, step}, each None or Int
  Ellipsis,
  Module,    // s = "numpy"
  Function,  // func: a helper defined in the spec
  Builtin,   // s = qualified name ("np.exp", "len", "ndarray.reshape"); self = receiver of a method
};

struct Value {
  ValueKind kind = ValueKind::None;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<Value> items;
  ir::NodeId node = -1;
  ir::DType dtype = ir::DType::F32;
  bool python_type = false;
  const FuncDef* func = nullptr;
  std::shared_ptr<const Value> self;

  static Value none() { return Value{}; }
  static Value boolean(bool b) {
    Value v;
    v.kind = ValueKind::Bool;
    v.i = b;
    return v;
  }
  static Value integer(int64_t x) {
    Value v;
    v.kind = ValueKind::Int;
    v.i = x;
    return v;
  }
  static Value real(double x) {
    Value v;
    v.kind = ValueKind::Float;
    v.f = x;
    return v;
  }
  static Value str(std::string text) {
    Value v;
    v.kind = ValueKind::Str;
    v.s = std::move(text);
    return v;
  }
  static Value tuple(std::vector<Value> xs, ValueKind kind = ValueKind::Tuple) {
    Value v;
    v.kind = kind;
    v.items = std::move(xs);
    return v;
  }
  static Value tensor(ir::NodeId id) {
    Value v;
    v.kind = ValueKind::Tensor;
    v.node = id;
    return v;
  }
  static Value dtype_value(ir::DType d, bool python_type = false) {
    Value v;
    v.kind = ValueKind::DType;
    v.dtype = d;
    v.python_type = python_type;
    return v;
  }
  static Value builtin(std::string name, std::shared_ptr<const Value> receiver = nullptr) {
    Value v;
    v.kind = ValueKind::Builtin;
    v.s = std::move(name);
    v.self = std::move(receiver);
    return v;
  }

  bool is_tensor() const { return kind == ValueKind::Tensor; }
  bool is_scalar() const { return kind == ValueKind::Bool || kind == ValueKind::Int || kind == ValueKind::Float; }
  bool is_integral() const { return kind == ValueKind::Bool || kind == ValueKind::Int; }
  bool is_sequence() const { return kind == ValueKind::Tuple || kind == ValueKind::List; }
  /// The scalar as a double (Bool, Int, Float).
  double as_double() const { return kind == ValueKind::Float ? f : static_cast<double>(i); }
};

/// Python's repr of a float: the shortest text that reads back to the same value.
std::string float_repr(double x);
/// A value as it reads inside an error message: "f32[4, 8] array", "python float 0.5", "tuple".
std::string describe(const Value& v, const ir::Graph& g);
/// Python's repr for scalars, tuples of scalars and strings (used in messages).
std::string repr(const Value& v, const ir::Graph& g);

}  // namespace axon::frontend
