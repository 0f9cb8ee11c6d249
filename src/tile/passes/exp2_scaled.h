// Pass exp2_scaled: the exponential of a scaled value in a vector loop is
// computed as a power of two, the scale multiplied by log2(e) once before
// the loop.
//
/// In every Store, Accumulate and Rescale value of a Vectorized loop with no
/// loop inside it, each float32 `exp(mul(c, v))` (or `exp(mul(v, c))`) whose
/// `c` does not vary in the loop (does not use its variable, reads no buffer
/// the loop writes) and whose `v` does becomes `pow(2, mul(v, s))`, with
/// `s` a scalar Register set before the loop to `c * log2(e)` computed in
/// float64 and rounded once to float32. The C++ printer prints a power of
/// the literal 2 in a vector loop as the vector math's exp2 (a table of 16
/// powers and a polynomial, cheaper than exp's range reduction), and the
/// product with `c` folds into exp2's input.
///
/// Within the error budget (docs/error_budget.md): the IR's product rounds,
/// so exp's rule already gives exp's input an error of u|c v|, doubled by
/// the gate; the folded input errs by at most 2u|c v| (the rounded `s` and
/// the product), and exp2's own 1 ulp is inside exp's 4u. `exp(-v)` is no
/// product (a negation does not round), so it keeps exp. The loop becomes a
/// Seq holding the Allocs and Stores of its scales, then the loop.
#pragma once

#include "tile/kernel.h"

namespace axon::tile {

Kernel exp2_scaled(const Kernel& k);

}  // namespace axon::tile
