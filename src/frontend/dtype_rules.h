// numpy's dtype rules, restricted to the dtypes axon has (ir/type.h).
//
// Arrays carry "strong" dtypes; Python scalars are "weak" (NEP 50, numpy 2):
// a Python float meeting an f32 array becomes f32, a Python int meeting an
// i32 array becomes i32 (out-of-range values are an error, as in numpy), and
// a weak scalar of a higher kind than the array (float with an int array,
// int with a bool array) gives that kind's default dtype (f64, i64).
// Strong promotion follows np.promote_types: bool < i32 < i64, f16 < f32 <
// f64, f16 and bf16 meet at f32, and any integer with any float gives f64
// except that an integer never narrows f64.
#pragma once

#include <string>
#include <vector>

#include "ir/type.h"

namespace axon::frontend {

enum class ScalarKind { Bool = 0, Int = 1, Float = 2 };

ScalarKind kind_of(ir::DType d);
/// Bool -> bool, Int -> i64, Float -> f64 (numpy's defaults for Python scalars).
ir::DType default_dtype(ScalarKind k);

/// One operand of a numpy operation, as far as dtypes are concerned.
struct DTypeOperand {
  bool weak = false;                   // a Python scalar
  ir::DType dtype = ir::DType::F32;    // when strong
  ScalarKind kind = ScalarKind::Float; // when weak
  static DTypeOperand strong(ir::DType d) { return DTypeOperand{false, d, kind_of(d)}; }
  static DTypeOperand python(ScalarKind k) { return DTypeOperand{true, default_dtype(k), k}; }
};

/// np.promote_types for two strong dtypes.
ir::DType promote_types(ir::DType a, ir::DType b);
/// np.result_type over operands, with NEP 50 weak scalars; at least one operand.
ir::DType result_type(const std::vector<DTypeOperand>& operands);

/// The dtype in which a float-valued ufunc (exp, sqrt, tanh, ...) computes:
/// bool -> f16, integers -> f64, floats unchanged.
ir::DType float_ufunc_dtype(ir::DType d);

/// `value` rounded to the nearest value representable in `d` (ties to even),
/// so that a constant node holds exactly what numpy would store.
double round_to_dtype(double value, ir::DType d);
/// Whether an integer fits `d` (used for Python ints meeting integer arrays).
bool int_fits(int64_t value, ir::DType d);

/// Reads a dtype spelled as numpy or annotations do: "float32", "f32", "float",
/// "double", "half", "bool", "int32", "int64", "int", "bfloat16", "bf16".
bool parse_dtype_name(const std::string& name, ir::DType* out);
/// numpy's spelling of a dtype, for messages: "float32", "bfloat16".
const char* numpy_dtype_name(ir::DType d);

}  // namespace axon::frontend
