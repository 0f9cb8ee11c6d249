// Runs a compiled kernel on inputs and judges its outputs against the
// float64 reference under the error budget. Outputs are poisoned with NaN
// bit patterns before the call so that an element left unwritten fails.
#pragma once

#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "runtime/loaded_kernel.h"
#include "support/buffer_memory.h"
#include "verify/error_budget.h"

namespace axon::runtime {

struct OutputCheck {
  verify::Comparison cmp;
  std::vector<double> got;  // the kernel's output as float64
};

struct RunCheck {
  std::vector<ir::Tensor> inputs, reference, bounds;
  std::vector<OutputCheck> outputs;
  double interpreter_seconds = 0;
  bool ok() const;
};

/// Bytes on 64-byte boundaries, as a caller's large arrays usually are
/// (PyTorch's and axon's own buffers): the kernels' aligned fast paths
/// (streaming stores of whole lines) are the ones checked. From 4 MiB up,
/// on huge pages as numpy's arrays are (support/buffer_memory.h), so that
/// timings see the memory users' arrays live in.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(support::alloc_buffer_memory(n * sizeof(T))); }
  void deallocate(T* p, size_t) { support::free_buffer_memory(p); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const CacheLineAllocator<U>&) const { return false; }
};
using AlignedBytes = std::vector<uint8_t, CacheLineAllocator<uint8_t>>;

/// Kernel buffers for `inputs` and poisoned outputs, in ABI order, each on a
/// 64-byte boundary.
struct KernelBuffers {
  std::vector<AlignedBytes> storage;
  std::vector<void*> pointers() ;
};
KernelBuffers make_buffers(const ir::Graph& g, const std::vector<ir::Tensor>& inputs);

/// Evaluates the reference and the bounds, calls `kernel` once, compares.
RunCheck run_and_check(const ir::Graph& g, const LoadedKernel& kernel, uint64_t seed);

}  // namespace axon::runtime
