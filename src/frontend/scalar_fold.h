// Constant folding of Python scalar expressions, with Python's semantics.
//
// `H // 4`, `1.0 / np.sqrt(D)` and `(0.1 * np.log(40.0) + 1.0) ** 2` are
// computed here, while lowering, and stay Python scalars: bool and int
// arithmetic as Python does it (floor division and modulo round toward
// negative infinity, int / int is a float, bools count as ints), floats in
// IEEE double. Where Python raises (division by zero, 0.0 ** -1, a complex
// result) the fold raises a Diagnostic at `at`; ints are held in 64 bits, and
// leaving that range is reported as unsupported rather than wrapped.
// numpy functions applied to Python scalars fold here too and, like the
// arithmetic, produce Python scalars (so np.sqrt(64) meeting an f32 array
// adopts f32, as a Python float would).
#pragma once

#include <string>
#include <vector>

#include "frontend/value.h"

namespace axon::frontend {

/// `op` is the operator's spelling: + - * / // % ** & | ^ << >> < <= > >= == !=.
Value fold_binary(const std::string& op, const Value& a, const Value& b, const SourceLoc& at);
/// `op` is - + or ~.
Value fold_unary(const std::string& op, const Value& a, const SourceLoc& at);
/// np.<name>(args...) on Python scalars. Returns false when `name` is not a
/// foldable numpy function (the caller then builds graph nodes).
bool fold_numpy(const std::string& name, const std::vector<Value>& args, const SourceLoc& at, Value* out);
/// Python's truth value of a scalar, string, tuple, list or None.
bool truthy(const Value& v);

}  // namespace axon::frontend
