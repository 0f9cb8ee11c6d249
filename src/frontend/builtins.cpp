// Calls in general, Python builtins, ndarray attributes and methods, and
// calls of dtypes (np.float32(x), float(x), ...).
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include "frontend/lowerer.h"
#include "frontend/scalar_fold.h"

namespace axon::frontend {

namespace {

const std::set<std::string> kSupportedBuiltins = {"abs", "len", "min", "max", "tuple", "list", "range", "sum", "pow",
                                                  "round"};
const std::set<std::string> kRefusedBuiltins = {
    "print", "isinstance", "zip", "map", "filter", "enumerate", "sorted", "reversed", "divmod", "any", "all",
    "type", "str", "iter", "next", "hasattr", "getattr", "setattr", "id", "hash", "open", "input", "eval",
    "exec", "super", "object", "dict", "set", "frozenset", "complex", "slice", "repr", "format", "vars",
    "globals", "locals", "callable", "chr", "ord", "bin", "hex", "oct", "issubclass", "compile", "memoryview",
    "bytearray", "bytes", "property", "staticmethod", "classmethod", "delattr", "dir", "help", "breakpoint"};

const std::set<std::string> kMethods = {"reshape", "transpose", "swapaxes", "astype", "sum", "mean", "max", "min",
                                        "var", "std", "copy", "ravel", "flatten", "squeeze", "clip", "dot"};
const std::set<std::string> kRefusedMethods = {
    "prod", "cumsum", "cumprod", "argmax", "argmin", "argsort", "sort", "all", "any", "item", "tolist", "fill",
    "nonzero", "repeat", "take", "put", "diagonal", "trace", "conj", "conjugate", "round", "view", "tobytes",
    "resize", "ptp", "choose", "compress", "searchsorted", "partition", "argpartition", "flat", "imag", "real",
    "setflags", "byteswap", "tofile", "dump", "dumps", "getfield", "setfield", "itemset", "newbyteorder"};

double parse_float_text(const std::string& text, const SourceLoc& at) {
  std::string t;
  for (char c : text)
    if (c != ' ' && c != '_') t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "inf" || t == "+inf" || t == "infinity" || t == "+infinity") return INFINITY;
  if (t == "-inf" || t == "-infinity") return -INFINITY;
  if (t == "nan" || t == "+nan" || t == "-nan") return NAN;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(t.c_str(), &end);
  if (t.empty() || *end != '\0' || t.find("0x") != std::string::npos)
    fail_at(at, "could not convert string to float: '" + text + "'");
  return v;
}

}  // namespace

Value Lowerer::builtin_value(const std::string& name) const {
  if (name == "float") return Value::dtype_value(DType::F64, true);
  if (name == "int") return Value::dtype_value(DType::I64, true);
  if (name == "bool") return Value::dtype_value(DType::Bool, true);
  if (kSupportedBuiltins.count(name) || kRefusedBuiltins.count(name)) return Value::builtin(name);
  return Value::none();
}

Value Lowerer::call(const Value& callee, const CallArgs& args, const SourceLoc& at) {
  switch (callee.kind) {
    case ValueKind::Function:
      return call_function(*callee.func, args, at);
    case ValueKind::DType:
      return call_dtype(callee, args, at);
    case ValueKind::Builtin:
      if (callee.s.rfind("np.", 0) == 0) return call_numpy(callee.s.substr(3), args, at);
      if (callee.s.rfind("ndarray.", 0) == 0) return call_method(callee.s.substr(8), *callee.self, args, at);
      if (callee.s == "finfo") break;
      return call_builtin(callee.s, args, at);
    default:
      break;
  }
  fail_at(at, describe(callee, graph_) + " is not callable");
}

Value Lowerer::call_builtin(const std::string& name, const CallArgs& args, const SourceLoc& at) {
  if (kRefusedBuiltins.count(name)) fail_unsupported_at(at, "the builtin " + name + "() is not supported in specs");
  auto only_positional = [&](size_t lo, size_t hi) {
    if (!args.keywords.empty())
      fail_at(args.keywords[0].second.keyword_loc(),
              name + "() got an unexpected keyword argument '" + args.keywords[0].first + "'");
    size_t n = args.positional.size();
    if (n < lo || n > hi)
      fail_at(at, name + "() takes " + (lo == hi ? std::to_string(lo) : "from " + std::to_string(lo) + " to " +
                                                                            std::to_string(hi)) +
                      " positional argument" + (hi == 1 ? "" : "s") + " but " + std::to_string(n) +
                      (n == 1 ? " was" : " were") + " given");
  };
  if (name == "abs") {
    only_positional(1, 1);
    const Value& x = args.positional[0].value;
    Value out;
    if (x.is_scalar() && fold_numpy("abs", {x}, at, &out)) return out;
    if (x.is_tensor()) return ab_.unary(NpUnary::Abs, x, at, "abs");
    fail_at(args.positional[0].loc, "bad operand type for abs(): " + describe(x, graph_));
  }
  if (name == "len") {
    only_positional(1, 1);
    const Value& x = args.positional[0].value;
    if (x.is_tensor()) {
      const ir::Type& t = ab_.type(x.node);
      if (t.rank() == 0) fail_at(args.positional[0].loc, "len() of unsized object");
      return Value::integer(t.shape[0]);
    }
    if (x.is_sequence()) return Value::integer(static_cast<int64_t>(x.items.size()));
    if (x.kind == ValueKind::Str) return Value::integer(static_cast<int64_t>(x.s.size()));
    fail_at(args.positional[0].loc, describe(x, graph_) + " has no len()");
  }
  if (name == "min" || name == "max") {
    if (args.positional.empty()) fail_at(at, name + " expected at least 1 argument, got 0");
    for (const auto& [kw, arg] : args.keywords)
      fail_unsupported_at(arg.loc, name + "(" + kw + "=...) is not supported");
    std::vector<Arg> items;
    if (args.positional.size() == 1) {
      const Value& seq = args.positional[0].value;
      if (!seq.is_sequence())
        fail_at(args.positional[0].loc, name + "() of a single " + describe(seq, graph_) +
                                            (seq.is_tensor() ? "; use np." + name + " to reduce an array" : ""));
      for (const Value& v : seq.items) items.push_back(Arg{v, args.positional[0].loc});
      if (items.empty()) fail_at(at, name + "() arg is an empty sequence");
    } else {
      items = args.positional;
    }
    Value best = items[0].value;
    for (const Arg& a : items) {
      if (!a.value.is_scalar())
        fail_unsupported_at(a.loc, "the builtin " + name + "() compares Python numbers only; for arrays use np." +
                                       (name == "max" ? "maximum" : "minimum") + " (element-wise) or np." + name +
                                       " (reduction)");
      Value better = fold_binary(name == "max" ? ">" : "<", a.value, best, a.loc);
      if (better.i) best = a.value;
    }
    return best;
  }
  if (name == "tuple" || name == "list") {
    only_positional(0, 1);
    ValueKind kind = name == "tuple" ? ValueKind::Tuple : ValueKind::List;
    if (args.positional.empty()) return Value::tuple({}, kind);
    const Value& x = args.positional[0].value;
    if (x.is_sequence()) return Value::tuple(x.items, kind);
    if (x.is_tensor()) {
      std::vector<Value> items;
      for (NodeId n : as_array_list(x, args.positional[0].loc, name)) items.push_back(Value::tensor(n));
      return Value::tuple(items, kind);
    }
    if (x.kind == ValueKind::Str) {
      std::vector<Value> items;
      for (char c : x.s) items.push_back(Value::str(std::string(1, c)));
      return Value::tuple(items, kind);
    }
    fail_at(args.positional[0].loc, describe(x, graph_) + " is not iterable");
  }
  if (name == "range") {
    only_positional(1, 3);
    std::vector<int64_t> v;
    for (const Arg& a : args.positional) v.push_back(as_int(a.value, a.loc, "range() argument"));
    int64_t start = v.size() > 1 ? v[0] : 0, stop = v.size() > 1 ? v[1] : v[0], step = v.size() > 2 ? v[2] : 1;
    if (step == 0) fail_at(args.positional[2].loc, "range() arg 3 must not be zero");
    std::vector<Value> items;
    for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) {
      if (items.size() > 100000) fail_unsupported_at(at, "range() longer than 100000 elements");
      items.push_back(Value::integer(k));
    }
    return Value::tuple(items, ValueKind::List);
  }
  if (name == "sum") {
    only_positional(1, 2);
    const Value& seq = args.positional[0].value;
    if (!seq.is_sequence())
      fail_at(args.positional[0].loc, "sum() needs a list or tuple here, got " + describe(seq, graph_) +
                                          (seq.is_tensor() ? "; use np.sum to reduce an array" : ""));
    Value acc = args.positional.size() > 1 ? args.positional[1].value : Value::integer(0);
    for (const Value& v : seq.items) acc = binary_op("+", acc, v, at);
    return acc;
  }
  if (name == "pow") {
    only_positional(2, 2);
    return binary_op("**", args.positional[0].value, args.positional[1].value, at);
  }
  if (name == "round") {
    only_positional(1, 2);
    const Value& x = args.positional[0].value;
    if (args.positional.size() == 2 && args.positional[1].value.kind != ValueKind::None)
      fail_unsupported_at(args.positional[1].loc, "round() with ndigits is not supported");
    if (x.is_integral()) return Value::integer(x.i);
    if (x.kind == ValueKind::Float) {
      if (!std::isfinite(x.f)) fail_at(at, "cannot convert float " + float_repr(x.f) + " to integer");
      return Value::integer(static_cast<int64_t>(std::nearbyint(x.f)));
    }
    fail_unsupported_at(args.positional[0].loc, "round() of " + describe(x, graph_) + " is not supported");
  }
  AXON_CHECK(false) << "builtin " << name << " is listed but not lowered";
  return {};
}

Value Lowerer::tensor_attr(const Value& t, const std::string& name, const SourceLoc& at) {
  const ir::Type& type = ab_.type(t.node);
  if (name == "T") return Value::tensor(ab_.transpose(t.node, {}, at));
  if (name == "mT") {
    if (type.rank() < 2) fail_at(at, "matrix transpose with ndim < 2 is undefined");
    return Value::tensor(ab_.swapaxes(t.node, -1, -2, at));
  }
  if (name == "shape") {
    std::vector<Value> dims;
    for (int64_t d : type.shape) dims.push_back(Value::integer(d));
    return Value::tuple(dims);
  }
  if (name == "ndim") return Value::integer(type.rank());
  if (name == "size") return Value::integer(type.numel());
  if (name == "dtype") return Value::dtype_value(type.dtype);
  if (name == "itemsize") return Value::integer(ir::dtype_bytes(type.dtype));
  if (name == "nbytes") return Value::integer(ir::dtype_bytes(type.dtype) * type.numel());
  if (kMethods.count(name)) return Value::builtin("ndarray." + name, std::make_shared<Value>(t));
  if (kRefusedMethods.count(name)) fail_unsupported_at(at, "the array method ." + name + "() is not supported");
  fail_at(at, ir::type_str(type) + " array has no attribute '" + name + "'");
}

Value Lowerer::call_method(const std::string& name, const Value& self, const CallArgs& args, const SourceLoc& at) {
  const std::string fname = "ndarray." + name;
  NodeId x = self.node;
  // reshape(*shape) and transpose(*axes) take either several ints or one sequence.
  auto int_varargs = [&](const std::string& what) {
    std::vector<int64_t> out;
    if (args.positional.size() == 1 && args.positional[0].value.kind != ValueKind::None)
      return as_int_list(args.positional[0].value, args.positional[0].loc, what);
    for (const Arg& a : args.positional) out.push_back(as_int(a.value, a.loc, what));
    return out;
  };
  if (name == "reshape") {
    for (const auto& [kw, arg] : args.keywords) {
      if (kw == "order" || kw == "copy") {
        BoundArgs b(fname, CallArgs{{}, {{kw, arg}}}, {"*order", "*copy"}, 0, at);
        b.require_none(kw, graph_);
        continue;
      }
      if (kw != "shape") fail_at(arg.keyword_loc(), "reshape() got an unexpected keyword argument '" + kw + "'");
      return Value::tensor(ab_.reshape(x, as_int_list(arg.value, arg.loc, "shape"), at));
    }
    if (args.positional.empty()) fail_at(at, "reshape() takes at least one argument (the new shape)");
    return Value::tensor(ab_.reshape(x, int_varargs("shape"), at));
  }
  if (name == "transpose") {
    if (!args.keywords.empty())
      fail_at(args.keywords[0].second.keyword_loc(), "transpose() takes no keyword arguments");
    return Value::tensor(ab_.transpose(x, int_varargs("axes"), at));
  }
  if (name == "swapaxes") {
    BoundArgs b(fname, args, {"axis1", "axis2"}, 2, at);
    int rank = ab_.type(x).rank();
    int64_t a1 = ab_.normalize_axis(as_int(b.get("axis1"), b.loc("axis1"), "axis1"), rank, b.loc("axis1"));
    int64_t a2 = ab_.normalize_axis(as_int(b.get("axis2"), b.loc("axis2"), "axis2"), rank, b.loc("axis2"));
    return Value::tensor(ab_.swapaxes(x, a1, a2, at));
  }
  if (name == "astype") {
    BoundArgs b(fname, args, {"dtype", "order", "casting", "subok", "copy"}, 1, at);
    b.require_none("order", graph_);
    return Value::tensor(ab_.cast(x, *as_dtype(b.get("dtype"), b.loc("dtype")), at));
  }
  static const std::map<std::string, NpReduce> kReductions = {
      {"sum", NpReduce::Sum}, {"mean", NpReduce::Mean}, {"max", NpReduce::Max},
      {"min", NpReduce::Min}, {"var", NpReduce::Var},   {"std", NpReduce::Std}};
  if (auto r = kReductions.find(name); r != kReductions.end()) return reduction(r->second, fname, &self, args, at);
  if (name == "copy" || name == "ravel" || name == "flatten") {
    BoundArgs b(fname, args, {"order"}, 0, at);
    b.require_none("order", graph_);
    return name == "copy" ? self : Value::tensor(ab_.reshape(x, {-1}, at));
  }
  if (name == "squeeze") {
    BoundArgs b(fname, args, {"axis"}, 0, at);
    if (!b.has("axis")) return Value::tensor(ab_.squeeze(x, nullptr, at));
    std::vector<int64_t> axes = as_int_list(b.get("axis"), b.loc("axis"), "axis");
    return Value::tensor(ab_.squeeze(x, &axes, b.loc("axis")));
  }
  if (name == "clip") {
    BoundArgs b(fname, args, {"min", "max", "out"}, 0, at);
    b.require_none("out", graph_);
    auto bound = [&](const char* p) {
      return b.has(p) ? as_operand(b.get(p), b.loc(p), fname) : Value::none();
    };
    return clip(self, bound("min"), bound("max"), at, fname);
  }
  if (name == "dot") {
    BoundArgs b(fname, args, {"b", "out"}, 1, at);
    b.require_none("out", graph_);
    return Value::tensor(ab_.dot(x, as_array(b.get("b"), b.loc("b")), at));
  }
  AXON_CHECK(false) << "method " << name << " is listed but not lowered";
  return {};
}

Value Lowerer::call_dtype(const Value& dtype, const CallArgs& args, const SourceLoc& at) {
  std::string fname = dtype.python_type ? (dtype.dtype == DType::F64 ? "float" : dtype.dtype == DType::I64 ? "int" : "bool")
                                        : std::string("np.") + numpy_dtype_name(dtype.dtype);
  BoundArgs b(fname, args, {"x"}, 0, at);
  Value x = b.has("x") ? b.get("x") : Value::integer(0);
  const SourceLoc& xl = b.loc("x");
  if (dtype.python_type) {
    if (x.is_tensor())
      fail_unsupported_at(xl, fname + "() of an array reads its value at run time; use .astype() for a cast");
    DType d = dtype.dtype;
    if (d == DType::Bool) return Value::boolean(truthy(x));
    if (x.kind == ValueKind::Str) {
      if (d == DType::F64) return Value::real(parse_float_text(x.s, xl));
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(x.s.c_str(), &end, 10);
      if (x.s.empty() || *end != '\0' || errno == ERANGE)
        fail_at(xl, "invalid literal for int() with base 10: '" + x.s + "'");
      return Value::integer(v);
    }
    if (!x.is_scalar()) fail_at(xl, fname + "() argument must be a string or a number, not " + describe(x, graph_));
    if (d == DType::F64) return Value::real(x.as_double());
    if (x.is_integral()) return Value::integer(x.i);
    if (!std::isfinite(x.f)) fail_at(xl, "cannot convert float " + float_repr(x.f) + " to integer");
    if (std::fabs(x.f) >= 9.2e18) fail_unsupported_at(xl, "int() of a float beyond 64 bits");
    return Value::integer(static_cast<int64_t>(std::trunc(x.f)));
  }
  if (x.kind == ValueKind::Str) x = Value::real(parse_float_text(x.s, xl));
  if (x.is_tensor() || x.is_sequence()) return Value::tensor(as_array(x, xl, dtype.dtype));
  if (!x.is_scalar()) fail_at(xl, fname + "() cannot convert " + describe(x, graph_));
  // A numpy scalar is a strongly typed 0-d array.
  return Value::tensor(ab_.to_tensor(x, dtype.dtype, xl, /*cast=*/true));
}

}  // namespace axon::frontend
