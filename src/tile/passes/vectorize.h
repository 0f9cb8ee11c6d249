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

}  // namespace axon::tile
