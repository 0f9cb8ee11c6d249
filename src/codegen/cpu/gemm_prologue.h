// A GEMM stage's operand prologues (loop/gemm_prologue.h) for the CPU: the
// knob that places them, their legality and cost, and the functions
// tile/lower_gemm.h applies where it packs the operands.
//
/// Knob, prefix "k<i>.gemm.": prologue (1: each element of the operand
/// computed as it is packed, that operand then always packed; 0: the
/// operand computed whole into a buffer first, one parallel pass, as the
/// stage that computed it would, so that the search compares the two).
/// The default (values[0]) is 0 when A has a prologue (computed as packed,
/// A's rows are copied into the panels' columns one element at a time), 1
/// otherwise, with pack_b 1 first among its values (the default must be
/// legal).
/// The functions are built from the prologues' graphs by
/// tile/inline_value.h (each op's meaning is ir::body): the source param
/// is read from the operand's own buffer, the others from their buffers
/// at the addresses the graph's layout ops give (a gain is read along k,
/// never broadcast into a copy).
#pragma once

#include <string>
#include <vector>

#include "codegen/cpu/gemm.h"
#include "ir/graph.h"
#include "loop/partition.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tile/lower_gemm.h"

namespace axon::codegen {

bool has_prologue(const loop::Stage& st);

/// `knobs` (the GEMM's or the epilogue's) with the prologue's knob, pack_a /
/// pack_b reordered as above; unchanged without a prologue.
std::vector<schedule::Knob> with_prologue_knobs(std::vector<schedule::Knob> knobs, const loop::Stage& st,
                                                const std::string& prefix);
/// Reads `prologue` into s (missing: 1).
void prologue_schedule_from(const schedule::Schedule& sched, const std::string& prefix, GemmSchedule* s);
/// "" or why s cannot place the stage's prologues.
std::string prologue_why_illegal(const loop::Stage& st, const GemmSchedule& s);
/// Seconds the prologues add: their arithmetic at every element each time
/// it is packed (or once, prologue 0, with the operand's round trip through
/// memory) and the bytes of their other inputs.
double prologue_seconds(const ir::Graph& g, const loop::Stage& st, const GemmShape& shape, const GemmSchedule& s,
                        const target::Target& t);

/// The tile program's prologue for the stage (its inputs A's reads, then
/// B's, as Stage::inputs lists them after the others).
tile::GemmPrologue gemm_prologue(const ir::Graph& g, const loop::Stage& st);

}  // namespace axon::codegen
