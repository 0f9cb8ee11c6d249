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

/// call.cpp for `g`: includes "kernel.h" (abi.header) and defines
/// `void axon_gate_call(void* const* buffers)`, which calls abi.entry with
/// the buffers cast to the ABI's types (parameters, then outputs). The only
/// part of the drivers that depends on the spec.
std::string emit_call_source(const ir::Graph& g, const codegen::KernelAbi& abi);

/// driver.cpp: the driver's main(), the same for every spec (so its object
/// is compiled once per compiler and flags and cached); it calls the kernel
/// through axon_gate_call with one pointer per buffer of the plan, in ABI
/// order. Uses only the C library and POSIX (it links against the kernel's
/// object file).
const std::string& driver_source();

}  // namespace axon::gate
