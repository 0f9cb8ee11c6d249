// The numpy namespace: np.* constants, dtypes and functions.
#include <cmath>
#include <set>

#include "frontend/lowerer.h"
#include "frontend/scalar_fold.h"

namespace axon::frontend {

namespace {

const std::map<std::string, NpUnary>& unary_table() {
  static const std::map<std::string, NpUnary> k = {
      {"exp", NpUnary::Exp},       {"log", NpUnary::Log},           {"sqrt", NpUnary::Sqrt},
      {"tanh", NpUnary::Tanh},     {"sin", NpUnary::Sin},           {"cos", NpUnary::Cos},
      {"floor", NpUnary::Floor},   {"ceil", NpUnary::Ceil},         {"abs", NpUnary::Abs},
      {"absolute", NpUnary::Abs},  {"square", NpUnary::Square},     {"reciprocal", NpUnary::Reciprocal},
      {"negative", NpUnary::Neg},  {"positive", NpUnary::Pos},      {"logical_not", NpUnary::LogicalNot},
      {"invert", NpUnary::Invert}, {"bitwise_not", NpUnary::Invert}, {"bitwise_invert", NpUnary::Invert},
  };
  return k;
}

// numpy functions that fold on Python scalars but have no array lowering.
const std::set<std::string> kScalarOnly = {"log2", "log10", "log1p", "expm1", "tan", "arctan", "trunc", "rint", "fabs"};

const std::map<std::string, std::pair<NpBinary, const char*>>& binary_table() {
  static const std::map<std::string, std::pair<NpBinary, const char*>> k = {
      {"add", {NpBinary::Add, "+"}},           {"subtract", {NpBinary::Sub, "-"}},
      {"multiply", {NpBinary::Mul, "*"}},      {"divide", {NpBinary::TrueDiv, "/"}},
      {"true_divide", {NpBinary::TrueDiv, "/"}}, {"floor_divide", {NpBinary::FloorDiv, "//"}},
      {"mod", {NpBinary::Mod, "%"}},           {"remainder", {NpBinary::Mod, "%"}},
      {"maximum", {NpBinary::Maximum, ""}},    {"minimum", {NpBinary::Minimum, ""}},
      {"greater", {NpBinary::Gt, ">"}},        {"greater_equal", {NpBinary::Ge, ">="}},
      {"less", {NpBinary::Lt, "<"}},           {"less_equal", {NpBinary::Le, "<="}},
      {"equal", {NpBinary::Eq, "=="}},         {"not_equal", {NpBinary::Ne, "!="}},
      {"logical_and", {NpBinary::LogicalAnd, ""}}, {"logical_or", {NpBinary::LogicalOr, ""}},
      {"logical_xor", {NpBinary::LogicalXor, ""}}, {"bitwise_and", {NpBinary::BitAnd, "&"}},
      {"bitwise_or", {NpBinary::BitOr, "|"}},  {"bitwise_xor", {NpBinary::BitXor, "^"}},
  };
  return k;
}

const std::set<std::string> kOtherFunctions = {
    "power", "fmax", "fmin", "where", "clip", "sum", "mean", "max", "amax", "min", "amin", "var", "std",
    "reshape", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze", "ravel", "broadcast_to",
    "concatenate", "concat", "stack", "hstack", "vstack", "split", "flip", "fliplr", "flipud", "triu", "tril",
    "ascontiguousarray", "asarray", "array", "copy", "zeros", "ones", "full", "zeros_like", "ones_like",
    "full_like", "arange", "eye", "identity", "tri", "matmul", "dot", "einsum", "outer", "shape", "ndim", "size",
    "dtype", "finfo", "permute_dims", "matrix_transpose"};

// Real numpy names axon does not lower (yet): refused as unsupported rather than unknown.
const std::set<std::string> kKnownUnsupported = {
    "prod", "product", "cumsum", "cumprod", "argmax", "argmin", "argsort", "sort", "all", "any", "nonzero",
    "unique", "take", "take_along_axis", "put", "pad", "tile", "repeat", "roll", "diag", "diagonal", "trace",
    "linalg", "random", "fft", "sign", "round", "around", "isnan", "isinf", "isfinite", "nan_to_num", "cbrt",
    "arcsin", "arccos", "arctan2", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "hypot", "logaddexp",
    "logaddexp2", "exp2", "median", "percentile", "quantile", "average", "cov", "corrcoef", "histogram",
    "searchsorted", "interp", "convolve", "correlate", "kron", "tensordot", "inner", "vdot", "cross", "meshgrid",
    "indices", "linspace", "logspace", "geomspace", "empty", "empty_like", "nansum", "nanmax", "nanmin", "nanmean",
    "float_power", "fmod", "divmod", "heaviside", "copysign", "signbit", "isclose", "allclose", "array_equal",
    "select", "piecewise", "choose", "compress", "extract", "broadcast_arrays", "atleast_1d", "atleast_2d",
    "atleast_3d", "column_stack", "dstack", "array_split", "hsplit", "vsplit", "dsplit", "rot90", "resize",
    "append", "insert", "delete", "ptp", "result_type", "promote_types", "can_cast", "iinfo", "errstate",
    "seterr", "vectorize", "apply_along_axis", "count_nonzero", "left_shift", "right_shift", "sinc", "deg2rad",
    "rad2deg", "degrees", "radians", "fix", "real", "imag", "conj", "angle", "frombuffer", "fromfunction",
    "load", "save", "ndarray", "float128", "complex64", "complex128", "int8", "int16", "uint8", "uint16",
    "uint32", "uint64"};

// numpy.finfo's resolution (10^-precision in decimal digits).
double finfo_resolution(DType d) {
  switch (d) {
    case DType::F16: return 1e-3;
    case DType::BF16: return 1e-2;
    case DType::F32: return 1e-6;
    default: return 1e-15;
  }
}

}  // namespace

Value Lowerer::numpy_attr(const std::string& name, const SourceLoc& at) {
  if (name == "pi") return Value::real(M_PI);
  if (name == "e") return Value::real(M_E);
  if (name == "euler_gamma") return Value::real(0.57721566490153286060);
  if (name == "inf" || name == "Inf" || name == "infty" || name == "PINF") return Value::real(INFINITY);
  if (name == "nan" || name == "NaN" || name == "NAN") return Value::real(NAN);
  if (name == "newaxis") return Value::none();
  static const std::map<std::string, DType> kDTypes = {
      {"float16", DType::F16}, {"half", DType::F16},   {"float32", DType::F32}, {"single", DType::F32},
      {"float64", DType::F64}, {"double", DType::F64}, {"int32", DType::I32},   {"int64", DType::I64},
      {"intp", DType::I64},    {"bool_", DType::Bool}, {"bool", DType::Bool},
  };
  auto d = kDTypes.find(name);
  if (d != kDTypes.end()) return Value::dtype_value(d->second);
  if (unary_table().count(name) || binary_table().count(name) || kScalarOnly.count(name) || kOtherFunctions.count(name))
    return Value::builtin("np." + name);
  if (kKnownUnsupported.count(name)) fail_unsupported_at(at, "np." + name + " is not supported");
  fail_at(at, "np." + name + " is not a supported numpy function");
}

Value Lowerer::finfo_attr(DType d, const std::string& name, const SourceLoc& at) {
  // The float64 format for any dtype that is no narrower float.
  const ir::FloatFormat fi = ir::float_format(d == DType::F16 || d == DType::BF16 || d == DType::F32 ? d : DType::F64);
  double v = 0;
  if (name == "eps") v = fi.eps;
  else if (name == "max") v = fi.max;
  else if (name == "min") v = -fi.max;
  else if (name == "tiny" || name == "smallest_normal") v = fi.tiny;
  else if (name == "resolution") v = finfo_resolution(d);
  else if (name == "bits") return Value::integer(ir::dtype_bytes(d) * 8);
  else if (name == "dtype") return Value::dtype_value(d);
  else fail_unsupported_at(at, "np.finfo(...)." + name + " is not supported");
  return Value::tensor(ab_.scalar(v, d, at));
}

Value Lowerer::reduction(NpReduce kind, const std::string& fname, const Value* self, const CallArgs& args,
                         const SourceLoc& at) {
  std::vector<std::string> params;
  if (!self) params.push_back("a");
  bool minmax = kind == NpReduce::Max || kind == NpReduce::Min;
  bool spread = kind == NpReduce::Var || kind == NpReduce::Std;
  for (const char* p : {"axis", "dtype", "out", "keepdims"}) {
    if (minmax && std::string(p) == "dtype") continue;
    params.push_back(p);
    if (spread && std::string(p) == "out") params.push_back("ddof");
  }
  for (const char* p : {"*initial", "*where", "*mean", "*correction"}) params.push_back(p);
  BoundArgs b(fname, args, params, self ? 0 : 1, at);
  for (const char* p : {"out", "initial", "where", "mean", "correction"}) b.require_none(p, graph_);
  NodeId x = self ? self->node : as_array(b.get("a"), b.loc("a"));
  std::optional<DType> dtype = b.has("dtype") ? as_dtype(b.get("dtype"), b.loc("dtype")) : std::nullopt;
  bool keepdims = b.has("keepdims") && as_bool(b.get("keepdims"), b.loc("keepdims"), "keepdims");
  double ddof = 0;
  if (b.has("ddof")) {
    const Value& d = b.get("ddof");
    if (!d.is_scalar()) fail_at(b.loc("ddof"), "ddof must be a number, got " + describe(d, graph_));
    ddof = d.as_double();
  }
  return Value::tensor(ab_.reduce(kind, x, b.get("axis"), keepdims, dtype, ddof, at, b.loc("axis"), fname));
}

Value Lowerer::clip(const Value& a, const Value& lo, const Value& hi, const SourceLoc& at, const std::string& fname) {
  if (lo.kind == ValueKind::None && hi.kind == ValueKind::None)
    fail_at(at, "one of max or min must be given");
  Value r = a;
  if (lo.kind != ValueKind::None) r = ab_.binary(NpBinary::Maximum, r, lo, at, fname);
  if (hi.kind != ValueKind::None) r = ab_.binary(NpBinary::Minimum, r, hi, at, fname);
  return r;
}

Value Lowerer::call_numpy(const std::string& name, const CallArgs& args, const SourceLoc& at) {
  const std::string fname = "np." + name;
  auto bind = [&](std::vector<std::string> params, size_t required) {
    return BoundArgs(fname, args, params, required, at);
  };
  auto array_arg = [&](const BoundArgs& b, const std::string& p) { return as_array(b.get(p), b.loc(p)); };
  auto int_arg = [&](const BoundArgs& b, const std::string& p, int64_t dflt) {
    return b.has(p) ? as_int(b.get(p), b.loc(p), p) : dflt;
  };
  auto dtype_arg = [&](const BoundArgs& b, const std::string& p) { return as_dtype(b.get(p), b.loc(p)); };

  // ---- elementwise
  if (unary_table().count(name) || kScalarOnly.count(name)) {
    BoundArgs b = bind({"x", "out", "*where", "*dtype"}, 1);
    for (const char* p : {"out", "where", "dtype"}) b.require_none(p, graph_);
    Value x = as_operand(b.get("x"), b.loc("x"), fname);
    Value folded;
    if (fold_numpy(name, {x}, at, &folded)) return folded;
    if (!unary_table().count(name)) fail_unsupported_at(at, fname + " on arrays is not supported");
    if (!x.is_tensor()) x = Value::tensor(as_array(x, b.loc("x")));
    return ab_.unary(unary_table().at(name), x, at, fname);
  }
  if (binary_table().count(name) || name == "power" || name == "fmax" || name == "fmin") {
    BoundArgs b = bind({"x1", "x2", "out", "*where", "*dtype"}, 2);
    for (const char* p : {"out", "where", "dtype"}) b.require_none(p, graph_);
    Value x1 = as_operand(b.get("x1"), b.loc("x1"), fname), x2 = as_operand(b.get("x2"), b.loc("x2"), fname);
    Value folded;
    if (fold_numpy(name, {x1, x2}, at, &folded)) return folded;
    if (name == "power") {
      if (!x2.is_scalar())
        fail_unsupported_at(b.loc("x2"), "np.power with an array exponent is not supported; the exponent must be a constant");
      return ab_.power(x1.is_tensor() ? x1 : Value::tensor(as_array(x1, b.loc("x1"))), x2, at);
    }
    if (name == "fmax" || name == "fmin") fail_unsupported_at(at, fname + " on arrays is not supported");
    auto [op, spelling] = binary_table().at(name);
    if (x1.is_scalar() && x2.is_scalar()) x1 = Value::tensor(as_array(x1, b.loc("x1")));
    return ab_.binary(op, x1, x2, at, *spelling ? spelling : fname);
  }
  if (name == "where") {
    if (args.positional.size() == 1 && args.keywords.empty())
      fail_unsupported_at(at, "np.where(cond) returns data-dependent indices; use np.where(cond, x, y)");
    BoundArgs b = bind({"condition", "x", "y"}, 3);
    return ab_.where(as_operand(b.get("condition"), b.loc("condition"), fname), as_operand(b.get("x"), b.loc("x"), fname),
                     as_operand(b.get("y"), b.loc("y"), fname), at);
  }
  if (name == "clip") {
    BoundArgs b = bind({"a", "a_min", "a_max", "out", "*min", "*max"}, 1);
    b.require_none("out", graph_);
    Value a = as_operand(b.get("a"), b.loc("a"), fname);
    if (!a.is_tensor()) a = Value::tensor(as_array(a, b.loc("a")));
    Value lo = b.has("a_min") ? b.get("a_min") : b.get("min"), hi = b.has("a_max") ? b.get("a_max") : b.get("max");
    return clip(a, lo.kind == ValueKind::None ? lo : as_operand(lo, b.loc("a_min"), fname),
                hi.kind == ValueKind::None ? hi : as_operand(hi, b.loc("a_max"), fname), at, fname);
  }

  // ---- reductions
  static const std::map<std::string, NpReduce> kReductions = {
      {"sum", NpReduce::Sum}, {"mean", NpReduce::Mean}, {"max", NpReduce::Max}, {"amax", NpReduce::Max},
      {"min", NpReduce::Min}, {"amin", NpReduce::Min},  {"var", NpReduce::Var}, {"std", NpReduce::Std}};
  if (auto r = kReductions.find(name); r != kReductions.end()) return reduction(r->second, fname, nullptr, args, at);

  // ---- layout
  if (name == "reshape") {
    BoundArgs b = bind({"a", "shape", "order", "*newshape", "*copy"}, 1);
    b.require_none("order", graph_);
    std::string key = b.has("shape") ? "shape" : "newshape";
    if (!b.has(key)) fail_at(at, "np.reshape() missing required argument 'shape'");
    return Value::tensor(ab_.reshape(array_arg(b, "a"), as_int_list(b.get(key), b.loc(key), "shape"), at));
  }
  if (name == "transpose" || name == "permute_dims") {
    BoundArgs b = bind({"a", "axes"}, 1);
    std::vector<int64_t> axes = b.has("axes") ? as_int_list(b.get("axes"), b.loc("axes"), "axes") : std::vector<int64_t>{};
    NodeId x = array_arg(b, "a");
    if (b.has("axes") && axes.empty() && ab_.type(x).rank() != 0) fail_at(b.loc("axes"), "axes don't match array");
    return Value::tensor(ab_.transpose(x, axes, at));
  }
  if (name == "matrix_transpose") {
    BoundArgs b = bind({"x"}, 1);
    NodeId x = array_arg(b, "x");
    if (ab_.type(x).rank() < 2) fail_at(at, "matrix transpose with ndim < 2 is undefined");
    return Value::tensor(ab_.swapaxes(x, -1, -2, at));
  }
  if (name == "swapaxes") {
    BoundArgs b = bind({"a", "axis1", "axis2"}, 3);
    NodeId x = array_arg(b, "a");
    int rank = ab_.type(x).rank();
    int64_t a1 = ab_.normalize_axis(as_int(b.get("axis1"), b.loc("axis1"), "axis1"), rank, b.loc("axis1"));
    int64_t a2 = ab_.normalize_axis(as_int(b.get("axis2"), b.loc("axis2"), "axis2"), rank, b.loc("axis2"));
    return Value::tensor(ab_.swapaxes(x, a1, a2, at));
  }
  if (name == "moveaxis") {
    BoundArgs b = bind({"a", "source", "destination"}, 3);
    return Value::tensor(ab_.moveaxis(array_arg(b, "a"), as_int_list(b.get("source"), b.loc("source"), "source"),
                                      as_int_list(b.get("destination"), b.loc("destination"), "destination"), at));
  }
  if (name == "expand_dims") {
    BoundArgs b = bind({"a", "axis"}, 2);
    return Value::tensor(ab_.expand_dims(array_arg(b, "a"), as_int_list(b.get("axis"), b.loc("axis"), "axis"), b.loc("axis")));
  }
  if (name == "squeeze") {
    BoundArgs b = bind({"a", "axis"}, 1);
    NodeId x = array_arg(b, "a");
    if (!b.has("axis")) return Value::tensor(ab_.squeeze(x, nullptr, at));
    std::vector<int64_t> axes = as_int_list(b.get("axis"), b.loc("axis"), "axis");
    return Value::tensor(ab_.squeeze(x, &axes, b.loc("axis")));
  }
  if (name == "ravel") {
    BoundArgs b = bind({"a", "order"}, 1);
    b.require_none("order", graph_);
    return Value::tensor(ab_.reshape(array_arg(b, "a"), {-1}, at));
  }
  if (name == "broadcast_to") {
    BoundArgs b = bind({"array", "shape", "*subok"}, 2);
    std::vector<int64_t> s = as_int_list(b.get("shape"), b.loc("shape"), "shape");
    return Value::tensor(ab_.broadcast_to(array_arg(b, "array"), Shape(s.begin(), s.end()), at));
  }
  if (name == "concatenate" || name == "concat" || name == "stack") {
    BoundArgs b = bind({"arrays", "axis", "out", "*dtype", "*casting"}, 1);
    b.require_none("out", graph_);
    std::vector<NodeId> parts = as_array_list(b.get("arrays"), b.loc("arrays"), fname);
    if (auto dt = dtype_arg(b, "dtype"))
      for (NodeId& p : parts) p = ab_.cast(p, *dt, at);
    if (name == "stack") return Value::tensor(ab_.stack(parts, int_arg(b, "axis", 0), at));
    Value axis = args.positional.size() > 1 || b.has("axis") ? b.get("axis") : Value::integer(0);
    if (axis.kind != ValueKind::None && axis.kind != ValueKind::Int) axis = Value::integer(as_int(axis, b.loc("axis"), "axis"));
    return Value::tensor(ab_.concatenate(parts, axis, at));
  }
  if (name == "hstack" || name == "vstack") {
    BoundArgs b = bind({"tup", "*dtype", "*casting"}, 1);
    std::vector<NodeId> parts = as_array_list(b.get("tup"), b.loc("tup"), fname);
    for (NodeId& p : parts) {
      int rank = ab_.type(p).rank();
      if (name == "vstack" && rank < 2) p = ab_.reshape(p, {1, rank == 0 ? 1 : ab_.type(p).shape[0]}, at);
      if (name == "hstack" && rank == 0) p = ab_.reshape(p, {1}, at);
    }
    bool one_d = !parts.empty() && ab_.type(parts[0]).rank() == 1;
    return Value::tensor(ab_.concatenate(parts, Value::integer(name == "hstack" && !one_d ? 1 : 0), at));
  }
  if (name == "split") {
    BoundArgs b = bind({"ary", "indices_or_sections", "axis"}, 2);
    NodeId x = array_arg(b, "ary");
    const Value& how = b.get("indices_or_sections");
    int64_t axis = int_arg(b, "axis", 0);
    std::vector<NodeId> parts =
        how.is_integral() ? ab_.split(x, how.i, {}, axis, at)
                          : ab_.split(x, 0, as_int_list(how, b.loc("indices_or_sections"), "indices_or_sections"), axis, at);
    std::vector<Value> out;
    for (NodeId p : parts) out.push_back(Value::tensor(p));
    return Value::tuple(out, ValueKind::List);
  }
  if (name == "flip" || name == "fliplr" || name == "flipud") {
    BoundArgs b = bind(name == "flip" ? std::vector<std::string>{"m", "axis"} : std::vector<std::string>{"m"}, 1);
    NodeId x = array_arg(b, "m");
    int rank = ab_.type(x).rank();
    if (name != "flip" && rank < (name == "fliplr" ? 2 : 1))
      fail_at(at, "input must be >= " + std::string(name == "fliplr" ? "2" : "1") + "-d");
    std::vector<int64_t> axes = name == "fliplr" ? std::vector<int64_t>{1} : name == "flipud" ? std::vector<int64_t>{0}
                                : b.has("axis") ? ab_.normalize_axes(b.get("axis"), rank, b.loc("axis"))
                                                : ab_.normalize_axes(Value::none(), rank, at);
    return Value::tensor(ab_.flip(x, axes, at));
  }
  if (name == "triu" || name == "tril") {
    BoundArgs b = bind({"m", "k"}, 1);
    return Value::tensor(ab_.triangle(array_arg(b, "m"), int_arg(b, "k", 0), name == "triu", at));
  }
  if (name == "ascontiguousarray" || name == "asarray" || name == "array" || name == "copy") {
    BoundArgs b = bind({"a", "dtype", "*order", "*copy", "*like", "*ndmin", "*subok"}, 1);
    b.require_none("order", graph_);
    if (b.has("ndmin")) fail_unsupported_at(b.loc("ndmin"), fname + "(ndmin=...) is not supported");
    return Value::tensor(as_array(b.get("a"), b.loc("a"), dtype_arg(b, "dtype")));
  }

  // ---- creation
  if (name == "zeros" || name == "ones" || name == "full") {
    bool full = name == "full";
    BoundArgs b = bind(full ? std::vector<std::string>{"shape", "fill_value", "dtype", "order"}
                            : std::vector<std::string>{"shape", "dtype", "order"},
                       full ? 2 : 1);
    b.require_none("order", graph_);
    std::vector<int64_t> s = as_int_list(b.get("shape"), b.loc("shape"), "shape");
    for (int64_t d : s)
      if (d < 0) fail_at(b.loc("shape"), "negative dimensions are not allowed");
    Value fill = full ? b.get("fill_value") : Value::integer(name == "ones");
    if (!fill.is_scalar()) fail_unsupported_at(b.loc("fill_value"), "np.full with a non-scalar fill value is not supported");
    std::optional<DType> dt = dtype_arg(b, "dtype");
    DType d = dt ? *dt : full ? ab_.result_type({fill}) : DType::F64;
    return Value::tensor(ab_.fill(Shape(s.begin(), s.end()), fill.as_double(), d, at, dt.has_value()));
  }
  if (name == "zeros_like" || name == "ones_like" || name == "full_like") {
    bool full = name == "full_like";
    BoundArgs b = bind(full ? std::vector<std::string>{"a", "fill_value", "dtype", "order", "subok", "shape"}
                            : std::vector<std::string>{"a", "dtype", "order", "subok", "shape"},
                       full ? 2 : 1);
    b.require_none("order", graph_);
    NodeId x = array_arg(b, "a");
    Shape s = ab_.type(x).shape;
    if (b.has("shape")) {
      std::vector<int64_t> v = as_int_list(b.get("shape"), b.loc("shape"), "shape");
      s = Shape(v.begin(), v.end());
    }
    Value fill = full ? b.get("fill_value") : Value::integer(name == "ones_like");
    if (!fill.is_scalar()) fail_unsupported_at(b.loc("fill_value"), "a non-scalar fill value is not supported");
    std::optional<DType> dt = dtype_arg(b, "dtype");
    return Value::tensor(ab_.fill(s, fill.as_double(), dt ? *dt : ab_.type(x).dtype, at, dt.has_value()));
  }
  if (name == "arange") {
    BoundArgs b = bind({"start", "stop", "step", "dtype"}, 1);
    Value start = b.get("start"), stop = b.get("stop"), step = b.get("step");
    if (!b.has("stop")) {
      stop = start;
      start = Value::integer(0);
    }
    if (!b.has("step")) step = Value::integer(1);
    for (const Value* v : {&start, &stop, &step})
      if (!v->is_scalar()) fail_at(at, "np.arange bounds must be Python numbers, got " + describe(*v, graph_));
    if (step.as_double() == 0) fail_at(b.loc("step"), "np.arange step must not be zero");
    bool ints = start.is_integral() && stop.is_integral() && step.is_integral();
    double n = std::ceil((stop.as_double() - start.as_double()) / step.as_double());
    int64_t len = n > 0 ? static_cast<int64_t>(n) : 0;
    std::optional<DType> dt = dtype_arg(b, "dtype");
    DType compute = ints ? DType::I64 : DType::F64;
    NodeId r = ab_.iota({len}, 0, compute, at);
    if (step.as_double() != 1) r = ab_.binary(NpBinary::Mul, Value::tensor(r), step, at, "np.arange").node;
    if (start.as_double() != 0) r = ab_.binary(NpBinary::Add, Value::tensor(r), start, at, "np.arange").node;
    return Value::tensor(dt ? ab_.cast(r, *dt, at) : r);
  }
  if (name == "eye" || name == "identity" || name == "tri") {
    bool identity = name == "identity";
    BoundArgs b = bind(identity ? std::vector<std::string>{"n", "dtype"}
                                : std::vector<std::string>{"N", "M", "k", "dtype", "order"},
                       1);
    if (!identity) b.require_none("order", graph_);
    std::string np = identity ? "n" : "N";
    int64_t rows = as_int(b.get(np), b.loc(np), np);
    int64_t cols = b.has("M") ? as_int(b.get("M"), b.loc("M"), "M") : rows;
    if (rows < 0 || cols < 0) fail_at(at, "negative dimensions are not allowed");
    int64_t k = int_arg(b, "k", 0);
    std::optional<DType> dt = dtype_arg(b, "dtype");
    DType d = dt ? *dt : DType::F64;
    Value offsets = Value::tensor(ab_.diagonal_offsets(rows, cols, at));
    Value mask = ab_.binary(name == "tri" ? NpBinary::Le : NpBinary::Eq, offsets, Value::integer(k), at, fname);
    if (d == DType::Bool) return mask;
    return ab_.where(mask, Value::tensor(ab_.scalar(1, d, at)), Value::tensor(ab_.scalar(0, d, at)), at);
  }

  // ---- contractions
  if (name == "matmul" || name == "dot" || name == "outer") {
    BoundArgs b = bind(name == "dot" || name == "outer" ? std::vector<std::string>{"a", "b", "out"}
                                                        : std::vector<std::string>{"x1", "x2", "out"},
                       2);
    b.require_none("out", graph_);
    std::string p1 = name == "matmul" ? "x1" : "a", p2 = name == "matmul" ? "x2" : "b";
    NodeId x = array_arg(b, p1), y = array_arg(b, p2);
    if (name == "matmul") return Value::tensor(ab_.matmul(x, y, at));
    if (name == "dot") return Value::tensor(ab_.dot(x, y, at));
    return Value::tensor(ab_.einsum("i,j->ij", {ab_.reshape(x, {-1}, at), ab_.reshape(y, {-1}, at)}, at));
  }
  if (name == "einsum") {
    if (args.positional.empty() || args.positional[0].value.kind != ValueKind::Str)
      fail_at(at, "np.einsum needs a subscripts string as its first argument");
    for (const auto& [kw, arg] : args.keywords) {
      if (kw == "optimize") continue;
      if (kw == "out" || kw == "dtype" || kw == "order" || kw == "casting")
        fail_unsupported_at(arg.loc, "np.einsum(" + kw + "=...) is not supported");
      fail_at(arg.keyword_loc(), "np.einsum() got an unexpected keyword argument '" + kw + "'");
    }
    std::vector<NodeId> ops;
    for (size_t k = 1; k < args.positional.size(); ++k)
      ops.push_back(as_array(args.positional[k].value, args.positional[k].loc));
    if (ops.empty()) fail_at(at, "np.einsum needs at least one operand");
    return Value::tensor(ab_.einsum(args.positional[0].value.s, ops, at));
  }

  // ---- introspection
  if (name == "shape" || name == "ndim" || name == "size") {
    BoundArgs b = bind({"a"}, 1);
    const ir::Type& t = ab_.type(array_arg(b, "a"));
    if (name == "ndim") return Value::integer(t.rank());
    if (name == "size") return Value::integer(t.numel());
    std::vector<Value> dims;
    for (int64_t d : t.shape) dims.push_back(Value::integer(d));
    return Value::tuple(dims);
  }
  if (name == "dtype") {
    BoundArgs b = bind({"dtype"}, 1);
    const Value& v = b.get("dtype");
    if (v.is_tensor()) return Value::dtype_value(ab_.type(v.node).dtype);
    return Value::dtype_value(*as_dtype(v, b.loc("dtype")));
  }
  if (name == "finfo") {
    BoundArgs b = bind({"dtype"}, 1);
    const Value& v = b.get("dtype");
    DType d = v.is_tensor() ? ab_.type(v.node).dtype
              : v.kind == ValueKind::Float ? DType::F64
              : v.kind == ValueKind::None ? DType::F64 : *as_dtype(v, b.loc("dtype"));
    if (!ir::is_float(d)) fail_at(b.loc("dtype"), std::string("data type ") + numpy_dtype_name(d) + " not inexact");
    Value f = Value::builtin("finfo");
    f.dtype = d;
    return f;
  }
  AXON_CHECK(false) << "np." << name << " is listed but not lowered";
  return {};
}

}  // namespace axon::frontend
