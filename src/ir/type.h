// Element types, shapes and tensor types of the graph IR.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace axon::ir {

enum class DType : uint8_t { Bool, I32, I64, F16, BF16, F32, F64 };

using Shape = std::vector<int64_t>;

struct Type {
  DType dtype = DType::F32;
  Shape shape;
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const;
  bool operator==(const Type&) const = default;
};

/// "f32", "bf16", ... as written in spec annotations.
const char* dtype_name(DType d);
/// Parses an annotation dtype name; false when unknown.
bool parse_dtype(const std::string& name, DType* out);
/// The C type that holds one element in kernel buffers.
const char* dtype_c_type(DType d);
/// Bytes per element in kernel buffers.
int dtype_bytes(DType d);
bool is_float(DType d);
bool is_integer(DType d);

/// A floating dtype's binary format as numpy.finfo gives it: eps (the gap
/// from 1 to the next value; the unit roundoff is eps / 2), the largest
/// finite value, tiny (the smallest normal). All 0 for the other dtypes.
struct FloatFormat {
  double eps = 0, max = 0, tiny = 0;
};
FloatFormat float_format(DType d);

/// "[4096, 1024]"
std::string shape_str(const Shape& s);
/// "f32[4096, 1024]"
std::string type_str(const Type& t);

/// Row-major strides, in elements.
std::vector<int64_t> row_major_strides(const Shape& s);

}  // namespace axon::ir
