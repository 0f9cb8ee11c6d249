// kernel_info: the KernelInfo (codegen/kernel_info.h) of a kernel printed
// from stage programs (codegen/cpu/emit_cpu.h): per stage its kind, the
// temporaries its program allocates and the identities it relies on, and
// the values stored between stages.
#pragma once

#include <vector>

#include "codegen/cpu/emit_cpu.h"
#include "codegen/kernel_info.h"

namespace axon::codegen {

KernelInfo cpu_kernel_info(const ir::Graph& g, const std::vector<StageProgram>& stages);

}  // namespace axon::codegen
