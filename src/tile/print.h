// The tile IR as text: what `axon lower` prints after each pass.
//
//   kernel softmax(x: f32[64, 128]) -> (out0: f32[64, 128])
//   alloc t1: memory f32[64]
//   // %1: f32[64] = reduce_max(%0) {axes = [1]}
//   for i0 in [0, 64) parallel(2 threads) {
//     {
//       alloc acc1: register f32[]
//       acc1[] = -inf
//       for r0 in [0, 128) serial {
//         acc1[] max= reduce_max(x[i0, r0])
//       }
//       t1[i0] = acc1[]
//     }
//   }
//   ...
// A Seq that allocates is printed in braces: its Scratch and Register
// buffers end with it.
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
