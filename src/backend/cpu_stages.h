// The CPU code generator's stages: what a graph's partition (loop/partition.h)
// becomes for the CPU, the one place that tells the stage kinds apart. Each
// stage has its knobs (codegen/cpu/stage_knobs.h, gemm.h, gemm_epilogue.h,
// attention.h), a legality rule, a predicted time and a lowering to its tile
// program; schedule::schedule_space, why_illegal and predicted_seconds
// (schedule/schedule.h) are theirs, gathered over the stages, and emit_cpu
// prints the programs (codegen/cpu/emit_cpu.h).
//
/// A graph that is one row stage, or whose stages are all naive, is one
/// stage of the whole graph (knobs k0.*); otherwise stage i has knobs
/// k<i>.*. Requires for lower and emit_cpu: why_illegal(g, s, t) == "".
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/cpu/emit_cpu.h"
#include "codegen/kernel_source.h"
#include "ir/graph.h"
#include "schedule/schedule.h"
#include "target/target.h"

namespace axon::backend {

struct CpuStage {
  std::string title, kind;
  std::vector<schedule::Knob> knobs;
  std::function<std::string(const schedule::Schedule&)> why_illegal;  // "" when legal
  std::function<double(const schedule::Schedule&)> seconds;
  std::function<codegen::StageProgram(const schedule::Schedule&)> lower;
};

/// The stages of `g` on `t`.
std::vector<CpuStage> cpu_stages(const ir::Graph& g, const target::Target& t);

/// Every stage's tile program at `s`, in order.
std::vector<codegen::StageProgram> lower_stages(const ir::Graph& g, const schedule::Schedule& s, const target::Target& t);

/// The kernel of `g` at `s`: lower_stages printed by print_stage_programs.
codegen::KernelSource emit_cpu(const ir::Graph& g, const schedule::Schedule& s, const target::Target& t);

/// What emit_cpu prints, as tile programs (`axon lower --pipeline stages`):
/// one (title, program printed by tile::print) per stage.
std::vector<std::pair<std::string, std::string>> stage_programs(const ir::Graph& g, const schedule::Schedule& s,
                                                                const target::Target& t);

}  // namespace axon::backend
