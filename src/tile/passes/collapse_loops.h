// Pass collapse_loops: a short loop and the loop around it that walk memory
// as one axis become one loop, so that its vector lanes run full.
//
/// A serial loop `a` over [0, A) that is itself inside a loop and whose body
/// is one innermost serial loop `b` over [0, B) (no loop in its body: a
/// nest around a strided sum per kept element is interchange_sums' to
/// reorder), both of constant extent, with B shorter than kCollapseBelow,
/// becomes one serial loop over [0, A B) whose
/// variable f stands for a = f / B and b = f % B, when in every element
/// access of the nest that uses a or b the flat offset is then affine in f
/// (a's stride is B times b's: 28 x 28 spatial axes of an NCHW tensor, a
/// [.., 7, 7] tail), and a and b occur nowhere else (no loop extent, view
/// offset, matmul size or index value uses them). The iterations run in the
/// same order as before, so every value is the same; only the innermost
/// loop vectorize finds is longer (784 lanes' worth instead of 28: one
/// vector and a 12-element scalar tail per row of 28 before). Top-level
/// loops are left alone, so that parallelize still finds an outer loop.
/// Repeats inside out: a collapsed loop may collapse with the loop around
/// it while it stays short.
#pragma once

#include <cstdint>

#include "tile/kernel.h"

namespace axon::tile {

inline constexpr int64_t kCollapseBelow = 128;

Kernel collapse_loops(const Kernel& k);

}  // namespace axon::tile
