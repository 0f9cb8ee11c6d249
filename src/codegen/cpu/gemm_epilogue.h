// The Epilogue stage (loop/epilogue_group.h) for the CPU: the GEMM's knobs
// and one more, and its kernel, the GEMM's tile program with the
// elementwise function of the stage applied to each tile of the product
// (tile/lower_gemm.h), printed by codegen/c_like/tile_cpp.h.
//
/// Knobs, prefix "k<i>.gemm.": those of gemm_knobs (codegen/cpu/gemm.h) and
/// epilogue (1: on each register tile after its last K slice, while it is
/// in L1; 0: one pass over C after the product, as a separate stage would
/// make it, so that the search compares the two).
/// The function is built from the stage's graph by tile/inline_value.h
/// (each op's meaning is ir::body); values other than the product are read
/// from their buffers at the addresses the graph's layout ops give
/// (a broadcast bias is read along n, never copied).
#pragma once

#include <string>
#include <vector>

#include "codegen/cpu/gemm.h"
#include "ir/graph.h"
#include "loop/partition.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tile/kernel.h"

namespace axon::codegen {

std::vector<schedule::Knob> epilogue_knobs(const loop::EpilogueGroup& e, const target::Target& t,
                                           const std::string& prefix);
/// Missing knobs keep GemmSchedule's defaults (as gemm_schedule_from).
GemmSchedule epilogue_schedule_from(const schedule::Schedule& s, const std::string& prefix);
std::string epilogue_why_illegal(const loop::EpilogueGroup& e, const GemmSchedule& s, const target::Target& t);
/// The GEMM's prediction, the epilogue's arithmetic and the bytes of its
/// other inputs, and with `epilogue` 0 a round trip of C through memory.
double epilogue_seconds(const ir::Graph& g, const loop::EpilogueGroup& e, const GemmSchedule& s,
                        const target::Target& t);

/// The stage's tile program, verified. `g` is the partitioned graph (the
/// types of the epilogue's other inputs).
/// `p`: the operands' prologues (codegen/cpu/gemm_prologue.h), or none.
tile::Kernel epilogue_kernel(const ir::Graph& g, const loop::EpilogueGroup& e, const GemmSchedule& s,
                             const std::string& fn, const tile::GemmPrologue* p = nullptr);

}  // namespace axon::codegen
