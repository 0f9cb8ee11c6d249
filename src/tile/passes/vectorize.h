// Pass vectorize: innermost loops run as vector lanes (LoopKind::Vectorized).
//
/// An innermost serial loop (no loop inside it) of constant extent >= 4 is
/// marked Vectorized when the verifier can show that its lanes write
/// disjoint elements and read no element another lane writes, except a Sum
/// into a scalar Register (which the
/// printer turns into a vector reduction, adding in another order: the
/// error budget allows any order). Unit-stride access is what makes it
/// fast; other strides stay correct.
#pragma once

#include "tile/kernel.h"

namespace axon::tile {

Kernel vectorize(const Kernel& k);

}  // namespace axon::tile
