// kernel_info: the KernelInfo (codegen/kernel_info.h) of emit_cpu(g, s, t),
// read from the partition and from the tile programs emit_cpu prints.
//
/// Requires: schedule::why_illegal(g, s, t) == "".
#pragma once

#include "codegen/kernel_info.h"
#include "schedule/schedule.h"
#include "target/target.h"

namespace axon::codegen {

KernelInfo cpu_kernel_info(const ir::Graph& g, const schedule::Schedule& s, const target::Target& t);

}  // namespace axon::codegen
