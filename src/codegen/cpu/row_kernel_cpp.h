// Emits a loop::RowKernel as C++ with AVX-512 or AVX2+FMA intrinsics and
// OpenMP: the row loop is `omp parallel for`, each pass over a row is a
// vector loop with a masked (AVX-512) or scalar (AVX2, scalar) tail.
//
/// Requires: k.ok, k == plan_row_kernel(g), `opts` legal for the target
/// (why_illegal). Ensures: the ABI of kernel_abi.h; the kernel reads every
/// input element once from memory per pass that needs it (the row stays in
/// cache between passes) and writes every output element once; vector
/// instructions no wider than opts.vector_bits.
#pragma once

#include <string>

#include "codegen/kernel_source.h"
#include "ir/graph.h"
#include "loop/row_kernel.h"

namespace axon::codegen {

struct RowKernelOptions {
  int vector_bits = 512;  // 512, 256, or 0 (scalar)
  int threads = 1;        // OpenMP threads over rows (1: no parallel region)
  int row_block = 0;      // rows per OpenMP chunk (0: an even static split)
  int unroll = 1;         // vectors per step of the output pass (one interleaved tuple); unroll pragma of the remainder loops
  bool nt_store = false;  // streaming stores for row outputs (aligned vectors only)
  int row_group = 1;      // rows whose first reduction runs interleaved (when loop::leads_with_reduction)
  int prefetch_pass = 0;  // 0: none; p >= 1: pass p (in running order) prefetches the rows row_group ahead
  // Bytes ahead (0: none) at which the pass that reads the rows from memory
  // (the first in running order: the group pass with row_group > 1)
  // prefetches its row inputs with the non-temporal hint, one prefetch per
  // vector step; the address is not clamped (a prefetch never faults).
  // Vector code only.
  int stream_prefetch = 0;
};

KernelSource emit_row_kernel_cpp(const ir::Graph& g, const loop::RowKernel& k, const RowKernelOptions& opts);

}  // namespace axon::codegen
