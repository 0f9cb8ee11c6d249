// The driver: the trusted main() that axon compiles around a candidate
// kernel. It reads the plan, makes each call with guarded buffers, watches
// for work after return, times the kernel and reports through the files of
// protocol.h. Faults inside the kernel are caught by a signal handler that
// says which buffer (if any) the faulting address belongs to.
#pragma once

#include <string>

#include "codegen/c_like/kernel_abi.h"
#include "ir/graph.h"

namespace axon::gate {

/// `static void axon_gate_call(void* const* buffers)`: calls the entry with
/// the buffers cast to the ABI's types (parameters, then outputs).
std::string emit_call_wrapper(const ir::Graph& g, const codegen::KernelAbi& abi);

/// driver.cpp for `g`: includes "kernel.h" (abi.header) and calls abi.entry
/// with one pointer per buffer of the plan, in ABI order. Uses only the C
/// library and POSIX (it links against the kernel's object file).
std::string emit_driver_source(const ir::Graph& g, const codegen::KernelAbi& abi);

}  // namespace axon::gate
