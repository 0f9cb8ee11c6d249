// The optimising CPU code generator: a graph and a schedule in, standalone
// C++ with intrinsics (AVX-512 or AVX2) and OpenMP out.
//
/// Requires: why_illegal(g, s, t) == "". Ensures: the kernel has the same C
/// ABI as emit_naive_cpp (kernel_abi.h), includes only kernel.h, the C++
/// standard library, <immintrin.h> and <omp.h>, and computes what the
/// interpreter computes within the error budget, for every Target (an AVX2
/// target gets no AVX-512 instruction).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/kernel_info.h"
#include "codegen/kernel_source.h"
#include "ir/graph.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tile/kernel.h"

namespace axon::codegen {

/// The version of the code emit_cpu writes for a schedule. The tuning
/// database keys its rows by it: bump it whenever the same schedule starts
/// to give different code, so that stored times are not read against new
/// kernels.
inline constexpr int kCodegenVersion = 11;  // 4: tile-IR loop kernels for what no generator takes; 5: and as a choice beside row kernels; 6: GEMMs, layout copies and attention as tile programs; 7: masks computed in attention, masked key blocks skipped; 8: GEMMs with their elementwise epilogues; 9: row stages as tile programs (knob tile), loops kernels with chained vector reductions, lane-wide sum blocks, tuples, exp2 and reciprocal lowerings, hardware max; 10: QK-norm inside attention; 11: row stages only as tile programs (no knob tile or row_group), nt_store, row_block and prefetch_pass as the passes stream_stores, parallel_chunks and prefetch_next_rows

KernelSource emit_cpu(const ir::Graph& g, const schedule::Schedule& s, const target::Target& t);

/// The pieces of emit_cpu(g, s, t): per stage (or one for a kernel of the
/// whole graph) its title, its kind, its tile program, the identities its
/// lowering applies, and the results it stores in memory for later stages.
struct StageKernel {
  std::string title, kind;
  tile::Kernel program;
  std::vector<Reliance> relies_on;
  std::vector<ir::NodeId> stores;
};
std::vector<StageKernel> stage_kernels(const ir::Graph& g, const schedule::Schedule& s, const target::Target& t);

/// What emit_cpu prints for `s`, as tile programs (`axon lower --pipeline
/// stages`): one (title, program) per stage, the program printed by
/// tile::print.
std::vector<std::pair<std::string, std::string>> stage_programs(const ir::Graph& g, const schedule::Schedule& s,
                                                                const target::Target& t);

/// The compiler flags a kernel of emit_cpu needs for `t` (optimisation,
/// the ISA of `t` and no wider, -fopenmp), before "-o <lib> <source>";
/// `shared`: add -fPIC -shared.
std::vector<std::string> cpu_compile_flags(const target::Target& t, bool shared);

}  // namespace axon::codegen
