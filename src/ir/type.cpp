#include "ir/type.h"

#include <cfloat>
#include <cmath>
#include <sstream>

namespace axon::ir {

int64_t Type::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {
struct DTypeInfo {
  DType dtype;
  const char* name;
  const char* c_type;
  int bytes;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::Bool, "bool", "bool", 1},      {DType::I32, "i32", "int32_t", 4},
    {DType::I64, "i64", "int64_t", 8},     {DType::F16, "f16", "uint16_t", 2},
    {DType::BF16, "bf16", "uint16_t", 2},  {DType::F32, "f32", "float", 4},
    {DType::F64, "f64", "double", 8},
};
const DTypeInfo& info(DType d) { return kDTypes[static_cast<int>(d)]; }
}  // namespace

const char* dtype_name(DType d) { return info(d).name; }
const char* dtype_c_type(DType d) { return info(d).c_type; }
int dtype_bytes(DType d) { return info(d).bytes; }

bool parse_dtype(const std::string& name, DType* out) {
  for (const DTypeInfo& i : kDTypes)
    if (name == i.name) {
      *out = i.dtype;
      return true;
    }
  return false;
}

FloatFormat float_format(DType d) {
  switch (d) {
    case DType::F16: return {std::ldexp(1.0, -10), 65504.0, std::ldexp(1.0, -14)};
    case DType::BF16: return {std::ldexp(1.0, -7), 3.3895313892515355e38, std::ldexp(1.0, -126)};
    case DType::F32: return {std::ldexp(1.0, -23), 3.4028234663852886e38, std::ldexp(1.0, -126)};
    case DType::F64: return {DBL_EPSILON, DBL_MAX, DBL_MIN};
    default: return {};
  }
}

bool is_float(DType d) {
  return d == DType::F16 || d == DType::BF16 || d == DType::F32 || d == DType::F64;
}
bool is_integer(DType d) { return d == DType::I32 || d == DType::I64; }

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "]";
  return os.str();
}

std::string type_str(const Type& t) { return std::string(dtype_name(t.dtype)) + shape_str(t.shape); }

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

}  // namespace axon::ir
