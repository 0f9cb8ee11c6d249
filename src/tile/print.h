// The tile IR as text: what `axon lower` prints after each pass.
//
//   kernel softmax(X: input f32[64, 128]) -> (out0: output f32[64, 128])
//   alloc t2: memory f32[64]
//   for i0 in [0, 64) parallel {
//     alloc acc0: register f32[]
//     acc0[] = -inf
//     for r0 in [0, 128) serial {
//       acc0[] max= X[i0, r0]
//     }
//     ...
//
// Deterministic: the same kernel prints the same text, so tests compare
// passes' results as text as well as by running them.
#pragma once

#include <string>

#include "tile/kernel.h"

namespace axon::tile {

std::string print(const Kernel& k);
std::string print(const Kernel& k, const Stmt& s, int indent = 0);

}  // namespace axon::tile
