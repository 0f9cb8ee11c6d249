// Argument binding for built-in calls and the conversions of their arguments
// (ints, shapes, dtypes, arrays), each failing at the argument it rejects.
#include "frontend/lowerer.h"

namespace axon::frontend {

BoundArgs::BoundArgs(const std::string& fname, const CallArgs& args, const std::vector<std::string>& params,
                     size_t required, const SourceLoc& at)
    : fname_(fname), at_(at) {
  size_t positional = 0;
  for (const std::string& p : params)
    if (p[0] != '*') ++positional;
  if (args.positional.size() > positional)
    fail_at(args.positional[positional].loc, fname + "() takes at most " + std::to_string(positional) +
                                                 " positional argument" + (positional == 1 ? "" : "s") + " (" +
                                                 std::to_string(args.positional.size()) + " given)");
  for (size_t k = 0; k < args.positional.size(); ++k) bound_[params[k]] = args.positional[k];
  for (const auto& [name, arg] : args.keywords) {
    std::string key;
    for (const std::string& p : params)
      if (p == name || (p[0] == '*' && p.substr(1) == name)) key = p;
    if (key.empty()) fail_at(arg.keyword_loc(), fname + "() got an unexpected keyword argument '" + name + "'");
    if (bound_.count(key)) fail_at(arg.keyword_loc(), fname + "() got multiple values for argument '" + name + "'");
    bound_[key] = arg;
  }
  for (size_t k = 0; k < required; ++k)
    if (!bound_.count(params[k])) fail_at(at, fname + "() missing required argument '" + params[k] + "'");
}

namespace {
std::string key_of(const std::map<std::string, Arg>& bound, const std::string& name) {
  if (bound.count(name)) return name;
  return "*" + name;
}
}  // namespace

bool BoundArgs::has(const std::string& name) const {
  auto it = bound_.find(key_of(bound_, name));
  return it != bound_.end() && it->second.value.kind != ValueKind::None;
}

const Value& BoundArgs::get(const std::string& name) const {
  auto it = bound_.find(key_of(bound_, name));
  return it == bound_.end() ? none_ : it->second.value;
}

const SourceLoc& BoundArgs::loc(const std::string& name) const {
  auto it = bound_.find(key_of(bound_, name));
  return it == bound_.end() ? at_ : it->second.loc;
}

void BoundArgs::require_none(const std::string& name, const ir::Graph& g) const {
  if (!has(name)) return;
  const Value& v = get(name);
  if (name == "where" && v.kind == ValueKind::Bool && v.i) return;
  if (name == "order" && v.kind == ValueKind::Str && (v.s == "C" || v.s == "K" || v.s == "A")) return;
  if (name == "copy" || name == "optimize" || name == "casting") return;
  fail_unsupported_at(loc(name), fname_ + "(" + name + "=...) is not supported (got " + describe(v, g) + ")");
}

int64_t Lowerer::as_int(const Value& v, const SourceLoc& at, const std::string& what) {
  if (v.is_integral()) return v.i;
  if (v.is_tensor())
    fail_unsupported_at(at, what + " must be a Python integer known while lowering, got " + describe(v, graph_));
  fail_at(at, what + " must be an integer, got " + describe(v, graph_));
}

std::vector<int64_t> Lowerer::as_int_list(const Value& v, const SourceLoc& at, const std::string& what) {
  if (v.is_integral()) return {v.i};
  if (!v.is_sequence()) fail_at(at, what + " must be an integer or a tuple of integers, got " + describe(v, graph_));
  std::vector<int64_t> out;
  for (const Value& item : v.items) out.push_back(as_int(item, at, what));
  return out;
}

std::optional<DType> Lowerer::as_dtype(const Value& v, const SourceLoc& at) {
  if (v.kind == ValueKind::None) return std::nullopt;
  if (v.kind == ValueKind::DType) return v.dtype;
  if (v.kind == ValueKind::Str) {
    DType d;
    if (parse_dtype_name(v.s, &d)) return d;
    fail_at(at, "data type '" + v.s + "' not understood");
  }
  fail_at(at, "expected a dtype such as np.float32 or \"float32\", got " + describe(v, graph_));
}

NodeId Lowerer::as_array(const Value& v, const SourceLoc& at, std::optional<DType> dtype) {
  if (v.is_tensor()) return dtype ? ab_.cast(v.node, *dtype, at) : v.node;
  if (v.is_scalar()) return ab_.to_tensor(v, dtype ? *dtype : ab_.result_type({v}), at, dtype.has_value());
  if (v.is_sequence()) {
    if (v.items.empty()) fail_unsupported_at(at, "empty arrays are not supported");
    // np.array treats Python scalars inside a list as their default dtypes.
    std::vector<NodeId> parts;
    for (const Value& item : v.items) parts.push_back(as_array(item, at, dtype));
    DType dt = graph_[parts[0]].type.dtype;
    for (NodeId p : parts) dt = promote_types(dt, graph_[p].type.dtype);
    for (NodeId& p : parts) {
      p = ab_.cast(p, dt, at);
      if (graph_[p].type.shape != graph_[parts[0]].type.shape)
        fail_at(at, "setting an array element with a sequence: the nested sequences have inhomogeneous shapes");
    }
    return ab_.stack(parts, 0, at);
  }
  fail_at(at, "expected an array, got " + describe(v, graph_));
}

Value Lowerer::as_operand(const Value& v, const SourceLoc& at, const std::string& fname) {
  if (v.is_tensor() || v.is_scalar()) return v;
  if (v.is_sequence()) return Value::tensor(as_array(v, at));
  fail_at(at, fname + "() expects an array or a number, got " + describe(v, graph_));
}

std::vector<NodeId> Lowerer::as_array_list(const Value& v, const SourceLoc& at, const std::string& fname) {
  if (v.is_tensor()) {
    // Iterating an array walks its first axis.
    const ir::Type t = graph_[v.node].type;
    if (t.rank() == 0) fail_at(at, fname + "() expects a sequence of arrays, got a 0-d array");
    std::vector<NodeId> out;
    for (int64_t k = 0; k < t.shape[0]; ++k) out.push_back(ab_.index(v.node, Value::integer(k), at, {}));
    return out;
  }
  if (!v.is_sequence()) fail_at(at, fname + "() expects a sequence of arrays, got " + describe(v, graph_));
  std::vector<NodeId> out;
  for (const Value& item : v.items) out.push_back(as_array(item, at));
  return out;
}

bool Lowerer::as_bool(const Value& v, const SourceLoc& at, const std::string& what) {
  if (v.is_integral()) return v.i != 0;
  if (v.kind == ValueKind::None) return false;
  fail_at(at, what + " must be True or False, got " + describe(v, graph_));
}

}  // namespace axon::frontend
