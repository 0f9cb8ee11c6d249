// The C++ printer of the tile IR: one tile::Kernel in, standalone C++ out,
// scalar code whose loops carry their kind as OpenMP pragmas (Parallel:
// `omp parallel for`, one `collapse(k)` loop for k perfectly nested ones of
// constant extent and equal threads; Vectorized: `omp simd`, with a
// reduction clause for a scalar Sum accumulator; Unrolled: `GCC unroll`).
// With vector_bits set, a W x W Copy of 4-byte elements that reads along
// one axis and writes along the other is an in-register transpose
// (codegen/cpu/register_transpose.h; W 8 at 256 bits, 16 at 512), with
// streaming stores when the Copy is `streaming`, each thread fencing its
// own (docs/tile_ir.md).
//
/// Requires: tile::verify(k) is empty; k's Input and Output buffers are the
/// graph `g`'s params and outputs (tile::lower_graph and every pass keep
/// them). Ensures: kernel.h declares the C ABI of kernel_abi.h; kernel.cpp
/// includes only kernel.h and the C++ standard library (and needs -fopenmp
/// for its pragmas to take effect: without it they are ignored, and the
/// kernel runs on one thread with the same results up to summation order);
/// values are computed by instantiating ir/element_def.h with CScalar, so
/// the printed code computes what tile::interpret computes.
/// Refuses (axon::InternalError) GpuBlock and GpuThread loops and Shared
/// buffers, which only a GPU printer takes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/c_like/kernel_abi.h"
#include "codegen/kernel_source.h"
#include "ir/graph.h"
#include "tile/kernel.h"

namespace axon::codegen {

/// Accumulator chains of a vector reduction: a Vectorized loop holding a
/// reduction into a scalar Register steps over this many vectors at a time,
/// each with its own accumulator (fewer when the loop is shorter).
inline constexpr int kVectorChains = 4;

struct TileCppOptions {
  /// 256 or 512: a Vectorized loop whose body is float32 arithmetic over
  /// unit-stride or loop-invariant elements is printed with explicit vectors
  /// of that width (GCC vector operators on __m256 / __m512, exp, log, tanh
  /// and sqrt from the vector math of codegen/cpu/vector_math.h) and a
  /// scalar tail; a Sum into a scalar Register becomes a vector of partial
  /// sums added after the loop. Other Vectorized loops, and every one at 0,
  /// are printed as `omp simd` loops. The kernel then needs the ISA's flags.
  int vector_bits = 0;
  /// Vectors per step of a Vectorized loop without a reduction (1, 2 or 4),
  /// printed one after another in the loop body, each a chain of its own.
  int unroll = 1;
  /// Memory buffers and heap Scratch taken from a pool the kernel keeps
  /// across calls, not allocated and freed in each (the compiled float64
  /// reference, codegen/c_like/reference_cpp.h, whose temporaries run to
  /// gigabytes: freed to the system after each call, every call faulted
  /// their pages in and cleared them again). A block given back is taken
  /// again by the next request of the same size; the pool hands each block
  /// to one holder at a time under a lock (the kernel stays reentrant) and
  /// frees its blocks when the library is unloaded. Values are unchanged:
  /// no temporary is read before it is written (tile/verify.h).
  bool scratch_pool = false;
};

/// `what`: the kernel.cpp description line, e.g. "the naive kernel".
KernelSource print_tile_cpp(const tile::Kernel& k, const ir::Graph& g, const std::string& what,
                            const TileCppOptions& o = {});
/// A kernel that is no graph's (a layout-copy stage, tile/lower_copy.h):
/// the ABI is made from its Input and Output buffers (names, dtypes,
/// shapes) and its name is the entry.
KernelSource print_tile_cpp(const tile::Kernel& k, const std::string& what, const TileCppOptions& o = {});

/// `k` as `static void <fn>(const T* <in>..., T* <out>...)`, parameters
/// named after k's Input buffers (in param order) then its Outputs (in
/// output order), preceded by the #include lines and helpers it needs.
std::string print_tile_function(const tile::Kernel& k, const std::string& fn, const TileCppOptions& o = {});

/// One kernel of a translation unit of several (print_tile_unit): printed as
/// `void run(...)` in `namespace <ns>`, with the micro-kernels its Matmuls
/// call; its parameters are its Input buffers (param order), then its
/// Outputs (output order), named as kernel_abi.h names a kernel's.
struct UnitKernel {
  tile::Kernel program;
  std::string ns;
  std::string title;  // the comment line above it and above its call
  TileCppOptions options;
  /// What the entry passes: one name per Input buffer, then one per Output.
  std::vector<std::string> args;
};
/// A buffer the entry allocates before the first call and frees after the
/// last (64-byte aligned): a value passed between kernels.
struct UnitBuffer {
  std::string name;
  ir::DType dtype = ir::DType::F32;
  int64_t elements = 0;
};
/// After the calls: `bytes` bytes of `src` copied to `dst` (an output that
/// no kernel wrote in place).
struct UnitCopy {
  std::string dst, src;
  int64_t bytes = 0;
};

/// One kernel.cpp holding `kernels`, each in its own namespace, and the
/// entry with `abi`'s definition: it allocates `temps`, calls each kernel's
/// run in order with its args, makes the copies and frees the temps. The
/// helpers every kernel shares (vector math, vector helpers, f16
/// conversions, register transposes) are printed once, at file scope.
/// Requires: every args name is one of abi's parameters or outputs or a
/// temp; kernels' Inputs and Outputs match their args in number and dtype.
KernelSource print_tile_unit(const KernelAbi& abi, const std::vector<UnitKernel>& kernels,
                             const std::vector<UnitBuffer>& temps, const std::vector<UnitCopy>& copies,
                             const std::string& what);

}  // namespace axon::codegen
