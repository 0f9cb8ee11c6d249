// Pass reciprocal_divisors: a division by a value that a vector loop does
// not vary becomes a product with its reciprocal, which the compiler
// computes once before the loop.
//
/// In every Store, Accumulate and Rescale value whose innermost enclosing
/// loop is Vectorized, each float32 `div(a, d)` whose divisor `d` does not
/// use that loop's variable (one scalar per row, as softmax's sum or a
/// norm's root, or per call) becomes `mul(a, div(1, d))`. A vector division
/// per element costs more than the rest of a softmax pass; the product
/// adds one rounding (|fl(a fl(1/d)) - a/d| <= (2u + u^2)|a/d| against u),
/// inside every budget (docs/error_budget.md: the division's rule already
/// allows its operands' errors doubled by the gate). `div(1, d)` itself is
/// left alone, and so are divisions in other loops and of other dtypes.
#pragma once

#include "tile/kernel.h"

namespace axon::tile {

Kernel reciprocal_divisors(const Kernel& k);

}  // namespace axon::tile
