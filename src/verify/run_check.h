// Runs a compiled kernel on inputs and judges its outputs against the
// float64 reference under the error budget. Outputs are poisoned with NaN
// bit patterns before the call so that an element left unwritten fails.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/loaded_kernel.h"
#include "verify/error_budget.h"
#include "verify/interpreter.h"

namespace axon::verify {

struct OutputCheck {
  Comparison cmp;
  std::vector<double> got;  // the kernel's output as float64
};

struct RunCheck {
  std::vector<Tensor> inputs, reference, bounds;
  std::vector<OutputCheck> outputs;
  double interpreter_seconds = 0;
  bool ok() const;
};

/// Kernel buffers for `inputs` and poisoned outputs, in ABI order.
struct KernelBuffers {
  std::vector<std::vector<uint8_t>> storage;
  std::vector<void*> pointers() ;
};
KernelBuffers make_buffers(const ir::Graph& g, const std::vector<Tensor>& inputs);

/// Evaluates the reference and the bounds, calls `kernel` once, compares.
RunCheck run_and_check(const ir::Graph& g, const runtime::LoadedKernel& kernel, uint64_t seed);

}  // namespace axon::verify
