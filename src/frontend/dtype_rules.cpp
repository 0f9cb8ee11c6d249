#include "frontend/dtype_rules.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "support/diagnostic.h"

namespace axon::frontend {

using ir::DType;

ScalarKind kind_of(DType d) {
  if (d == DType::Bool) return ScalarKind::Bool;
  if (ir::is_integer(d)) return ScalarKind::Int;
  return ScalarKind::Float;
}

DType default_dtype(ScalarKind k) {
  switch (k) {
    case ScalarKind::Bool: return DType::Bool;
    case ScalarKind::Int: return DType::I64;
    case ScalarKind::Float: return DType::F64;
  }
  return DType::F64;
}

namespace {
int float_bits(DType d) {
  switch (d) {
    case DType::F16: case DType::BF16: return 16;
    case DType::F32: return 32;
    default: return 64;
  }
}
}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  ScalarKind ka = kind_of(a), kb = kind_of(b);
  if (ka == ScalarKind::Int && kb == ScalarKind::Int) return DType::I64;  // i32 with i64
  if (ka == ScalarKind::Int || kb == ScalarKind::Int) return DType::F64;  // 32/64-bit ints need f64
  // Two different floats: f16 and bf16 share no narrower type than f32.
  int bits = std::max(float_bits(a), float_bits(b));
  if (bits == 16) return DType::F32;
  return bits == 32 ? DType::F32 : DType::F64;
}

DType result_type(const std::vector<DTypeOperand>& operands) {
  AXON_CHECK(!operands.empty()) << "result_type of nothing";
  bool any_strong = false;
  DType strong = DType::Bool;
  int weak_kind = -1;
  for (const DTypeOperand& o : operands) {
    if (o.weak) {
      weak_kind = std::max(weak_kind, static_cast<int>(o.kind));
    } else {
      strong = any_strong ? promote_types(strong, o.dtype) : o.dtype;
      any_strong = true;
    }
  }
  if (!any_strong) return default_dtype(static_cast<ScalarKind>(weak_kind));
  if (weak_kind <= static_cast<int>(kind_of(strong))) return strong;
  return default_dtype(static_cast<ScalarKind>(weak_kind));
}

DType float_ufunc_dtype(DType d) {
  if (d == DType::Bool) return DType::F16;
  if (ir::is_integer(d)) return DType::F64;
  return d;
}

namespace {
// Rounds to a binary format with `precision` significand bits (implicit bit
// included), smallest exponent `min_exp` of a normal number, largest finite
// value `max_finite`. Subnormals share the quantum 2^(min_exp - precision + 1).
double round_to_format(double v, int precision, int min_exp, double max_finite) {
  if (!std::isfinite(v) || v == 0) return v;
  double a = std::fabs(v);
  int e = std::ilogb(a);
  int quantum = std::max(e, min_exp) - (precision - 1);
  double r = std::ldexp(std::nearbyint(std::ldexp(a, -quantum)), quantum);
  if (r > max_finite) r = HUGE_VAL;
  return std::copysign(r, v);
}
}  // namespace

double round_to_dtype(double v, DType d) {
  switch (d) {
    case DType::Bool: return v != 0 ? 1.0 : 0.0;
    case DType::I32:
    case DType::I64: return std::trunc(v);
    case DType::F16: return round_to_format(v, 11, -14, 65504.0);
    case DType::BF16: return round_to_format(v, 8, -126, 3.3895313892515355e38);
    case DType::F32: return static_cast<double>(static_cast<float>(v));
    case DType::F64: return v;
  }
  return v;
}

bool int_fits(int64_t value, DType d) {
  if (d == DType::I32) return value >= INT32_MIN && value <= INT32_MAX;
  return true;
}

bool parse_dtype_name(const std::string& name, DType* out) {
  struct Alias {
    const char* name;
    DType dtype;
  };
  static const Alias kAliases[] = {
      {"float32", DType::F32}, {"single", DType::F32},  {"float64", DType::F64}, {"double", DType::F64},
      {"float", DType::F64},   {"float16", DType::F16}, {"half", DType::F16},    {"bfloat16", DType::BF16},
      {"int32", DType::I32},   {"int64", DType::I64},   {"int", DType::I64},     {"bool_", DType::Bool},
      {"bool", DType::Bool},   {"intp", DType::I64},    {"f4", DType::F32},      {"f8", DType::F64},
      {"f2", DType::F16},      {"i4", DType::I32},      {"i8", DType::I64},      {"?", DType::Bool},
  };
  for (const Alias& a : kAliases)
    if (name == a.name) {
      *out = a.dtype;
      return true;
    }
  return ir::parse_dtype(name, out);
}

const char* numpy_dtype_name(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::F32: return "float32";
    case DType::F64: return "float64";
  }
  return "?";
}

}  // namespace axon::frontend
