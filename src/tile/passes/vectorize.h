// Pass vectorize: innermost loops run as vector lanes (LoopKind::Vectorized).
//
/// An innermost serial loop (no loop inside it) of constant extent >= 4 is
/// marked Vectorized when the verifier can show that its lanes write
/// disjoint elements and read no element another lane writes, except a Sum,
/// Max or Min into a scalar Register (which the printer's vector form keeps
/// as one partial per lane, folded after the loop: a sum adds in another
/// order, which the error budget allows; a max or min is exact, NaN
/// included). Unit-stride access is what makes it fast; other strides stay
/// correct.
#pragma once

#include "tile/kernel.h"

namespace axon::tile {

Kernel vectorize(const Kernel& k);

/// The lanes of vectorize that compute exactly what the serial loop does:
/// an innermost loop is marked only when nothing in it accumulates into a
/// scalar Register (no sum reordered into lanes, no max or min) and no
/// value in it is cast to a floating type narrower than f64 (GCC 12 at
/// -O2 drops the rounding of `(double)(float)x` in vectorized code). Used
/// by the compiled float64 reference, whose printer writes these loops as
/// `#pragma omp simd`.
Kernel vectorize_exact(const Kernel& k);

}  // namespace axon::tile
