// The schedule knobs of each stage kind and what they mean to the CPU code
// generators: the one place that maps knob values to emitter options and to
// the cost model, which the CPU stages (backend/cpu_stages.h) gather into
// schedule_space, why_illegal, predicted_seconds and their tile programs.
//
/// Knobs of stage i are named "k<i>." + the choice: a Row stage is a loops
/// kernel of the tile IR with vec_axis, threads, row_block, unroll, and
/// where they apply nt_store, stream_prefetch and prefetch_pass
/// (docs/tile_ir.md, "Row stages as tile programs");
/// a Contraction stage has gemm.{mr,nr,kc,mc,nc,threads,prefetch,pack_a,pack_b,split_n}
/// (codegen/cpu/gemm.h), an Epilogue stage those and gemm.epilogue
/// (codegen/cpu/gemm_epilogue.h); a Copy stage is a layout copy of the tile IR
/// (tile/lower_copy.h) with copy.{tile,threads,vector,width,order,nt_store,
/// band}; a Naive stage is a loops kernel of the tile IR with
/// loops.{threads,inline,vectorize,split}.
#pragma once

#include <string>
#include <vector>

#include "codegen/c_like/tile_cpp.h"
#include "codegen/cpu/gemm.h"
#include "loop/partition.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tile/lower_copy.h"
#include "tile/pipeline.h"

namespace axon::codegen {

/// "k<i>."
std::string stage_prefix(int i);

std::vector<schedule::Knob> row_stage_knobs(const loop::RowKernel& k, const target::Target& t,
                                            const std::string& prefix);
/// The loops pipeline's options for a Row stage (missing knobs take their
/// defaults): threads, vec_axis (vectorize), stream_prefetch
/// (prefetch_rows), prefetch_pass (prefetch_next_rows), nt_store
/// (stream_stores) and row_block (parallel_chunks).
tile::LoopsOptions row_stage_loops_options(const schedule::Schedule& s, const target::Target& t,
                                           const std::string& prefix);
/// Its printer's vectors per step of a vector loop without a reduction
/// (knob unroll; TileCppOptions::unroll).
int row_stage_unroll(const schedule::Schedule& s, const std::string& prefix);

/// The GEMM a Contraction stage is (C is the einsum's dense buffer).
GemmShape gemm_shape_of(const loop::Contraction& c);

using tile::CopySchedule;
using tile::CopyShape;
/// The layout copy a Copy stage is (`g` is the partitioned graph).
CopyShape copy_shape_of(const ir::Graph& g, const loop::Stage& s);
std::vector<schedule::Knob> copy_knobs(const CopyShape& c, const target::Target& t, const std::string& prefix);
CopySchedule copy_schedule_from(const schedule::Schedule& s, const std::string& prefix);
/// "" when legal: tile 8 or a multiple of 16 within [16, 512] and of the
/// register block, threads >= 1, vector only with AVX2 or wider and 4-byte
/// elements, 16 x 16 blocks only with AVX-512; band 1, 2, 4 or 8, above 1
/// only for vector order 0 and with 16 x band rows within the tile.
std::string copy_why_illegal(const CopyShape& c, const CopySchedule& s, const target::Target& t);
double copy_seconds(const CopyShape& c, const CopySchedule& s, const target::Target& t);

/// A graph (or stage) no specialised generator takes: the tile IR's loops
/// pipeline (tile/pipeline.h) with knobs loops.{threads,inline,vectorize,split}
/// (split: LoopsOptions::split_reductions; 0 is refused on one thread).
std::vector<schedule::Knob> loops_knobs(const target::Target& t, const std::string& prefix);
tile::LoopsOptions loops_options(const schedule::Schedule& s, const target::Target& t, const std::string& prefix);
/// Bytes over the bandwidth and FLOPs over the lanes, the part of the
/// program's innermost iterations outside every parallel loop (from its
/// tile program) at one thread's rates.
double loops_seconds(const ir::Graph& sub, const tile::LoopsOptions& o, const target::Target& t);

/// The tile printer's options for the ISA of `t` (codegen/c_like/tile_cpp.h):
/// vectors of 256 or 512 bits, or none below 256.
TileCppOptions tile_printer_options(const target::Target& t);

}  // namespace axon::codegen
