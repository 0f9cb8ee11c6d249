// The contraction code generator for the CPU: one (batched) float32 matrix
// product in, a standalone C++ function with intrinsics and OpenMP out.
//
/// Design (BLIS-like; docs/loop_ir.md, "Partitioning a graph into stages"):
/// for each batch, for each nc-wide column block of C, for each kc-deep slice
/// of K, B[kc x nc] is packed into nr-wide panels (zero padded); then the
/// mc-tall row blocks of C are shared among the threads (OpenMP, static),
/// each packs its A[mc x kc] into mr-tall panels in its own aligned scratch
/// and runs the register-blocked micro-kernel (mr rows x nr/W vectors of
/// accumulators, W = 16 lanes for AVX-512, 8 for AVX2, 1 scalar) over every
/// mr x nr tile. With split_n 1 the threads take whole column blocks
/// instead, each packing its own B into its own scratch: no barrier inside
/// the product (the default when the blocks split evenly over the threads
/// and the batches do not). Tiles cut by the
/// edge of M or N are computed in full on the zero-padded panels into a
/// local tile and only their valid part is merged into C, so any shape
/// (1, 7, 33, ...), any strides and broadcast operands are correct.
///
/// Either operand may instead be read in place (pack_a / pack_b = false):
/// the micro-kernel is templated on its operands' strides. It saves the
/// packing pass, whose cold reads of A and B do not overlap the FMAs (32 x
/// 256x256x64: 1.14x with both in place, bench/gemm/README.md). A with
/// contiguous rows is read in place by default. B in place needs contiguous
/// rows (b_n = 1) and whole panels (N % nr = 0), and loses when its rows are
/// a multiple of 4 KiB apart; A in place still packs a panel cut by the edge
/// of M.
///
/// Usage by the fusion code generator (emit_cpu):
///   auto knobs = gemm_knobs(shape, t, "k3.gemm.");   // add to the Space
///   GemmSchedule gs = gemm_schedule_from(schedule, "k3.gemm.");
///   if (auto why = gemm_why_illegal(shape, gs, t); !why.empty()) reject;
///   src += emit_gemm_function(shape, gs, t, "k3_gemm");
///   // then call k3_gemm(A, B, C) from the kernel body; compile with
///   // -O3 and the ISA of t (-mavx512f -mavx512bw -mavx512vl -mavx512dq or
///   // -mavx2 -mfma) and -fopenmp when threads > 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedule/schedule.h"
#include "tile/lower_gemm.h"
#include "target/target.h"

namespace axon::codegen {

using tile::GemmShape;

/// Dense row-major [batch][M][K] x [batch][K][N] -> [batch][M][N].
GemmShape dense_gemm_shape(int64_t batch, int64_t M, int64_t N, int64_t K);

using tile::GemmSchedule;

/// Knobs named prefix + {"mr","nr","kc","mc","nc","threads","prefetch","pack_a","pack_b","split_n"}, each
/// with its legal values; values[0] is the cost model's best guess. Not every
/// combination is legal: filter with gemm_why_illegal.
std::vector<schedule::Knob> gemm_knobs(const GemmShape& g, const target::Target& t, const std::string& prefix);

/// Reads the knobs of gemm_knobs from `s` (missing ones keep the defaults of
/// default_gemm_schedule(g, t) - pass them through gemm_knobs' values[0]).
GemmSchedule gemm_schedule_from(const schedule::Schedule& s, const std::string& prefix);

/// The cost model's best schedule for g on t (values[0] of every knob).
GemmSchedule default_gemm_schedule(const GemmShape& g, const target::Target& t);

/// "" when `s` can be emitted for `t`: nr a multiple of the vector width,
/// mr*nr/W accumulators + nr/W B vectors + 1 broadcast within the register
/// file (32 zmm / 16 ymm; scalar: mr*nr <= 64), the A micro-panel mr*kc
/// within half of L1 (it stays there while B panels stream past), a B
/// micro-panel kc*nr within 2x L1, the packed A block mc*kc within half of
/// L2 and the packed B block kc*nc within L2; mc a multiple of mr, nc of nr;
/// B read in place only with b_n = 1 and N a multiple of nr.
std::string gemm_why_illegal(const GemmShape& g, const GemmSchedule& s, const target::Target& t);

/// Predicted seconds of one call (roofline of the FMA peak scaled by the tile
/// efficiency and edge waste, plus packing traffic).
double gemm_predicted_seconds(const GemmShape& g, const GemmSchedule& s, const target::Target& t);

/// C++ text defining `static void <fn>(const float* A, const float* B, float* C)`
/// plus static helpers whose names start with fn. Needs only <immintrin.h>,
/// <omp.h> (threads > 1), <cstring>, <cstdlib>, <algorithm>, which it includes.
/// Requires gemm_why_illegal(g, s, t) == "".
std::string emit_gemm_function(const GemmShape& g, const GemmSchedule& s, const target::Target& t,
                               const std::string& fn);

}  // namespace axon::codegen
