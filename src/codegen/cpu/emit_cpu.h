// The optimising CPU code generator's printer of a whole kernel: the tile
// programs of a graph's stages (backend/cpu_stages.h lowers a partition to
// them) printed as one standalone C++ kernel with intrinsics (AVX-512 or
// AVX2) and OpenMP.
//
/// Ensures: the kernel has the same C ABI as emit_naive_cpp (kernel_abi.h),
/// includes only kernel.h, the C++ standard library, <immintrin.h> and
/// <omp.h>, and computes what its programs compute (each printed by
/// codegen/c_like/tile_cpp.h); an AVX2 target gets no AVX-512 instruction.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "codegen/kernel_info.h"
#include "codegen/kernel_source.h"
#include "ir/graph.h"
#include "target/target.h"
#include "tile/kernel.h"

namespace axon::codegen {

/// The version of the code the CPU code generator writes for a schedule.
/// The tuning database keys its rows by it: bump it whenever the same
/// schedule starts to give different code, so that stored times are not
/// read against new kernels.
inline constexpr int kCodegenVersion = 26;  // 4: tile-IR loop kernels for what no generator takes; 5: and as a choice beside row kernels; 6: GEMMs, layout copies and attention as tile programs; 7: masks computed in attention, masked key blocks skipped; 8: GEMMs with their elementwise epilogues; 9: row stages as tile programs (knob tile), loops kernels with chained vector reductions, lane-wide sum blocks, tuples, exp2 and reciprocal lowerings, hardware max; 10: QK-norm inside attention; 11: row stages only as tile programs (no knob tile or row_group), nt_store, row_block and prefetch_pass as the passes stream_stores, parallel_chunks and prefetch_next_rows; 12: the blocks a mask cuts by each row's kept keys; 13: collapse_loops; 14: GEMM row ranges of equal panel counts; 15: register tiles a vector wide for products narrower than one; 16: transposes read in place by loops (transpose_blocks), loops.nt_store, epilogues over a folded batch; 17: concatenations read from their pieces by split loops (split_concat_reads), loops fused over keepdims statistics, a copy stage after the stage computing its base; 18: two products over one A paired on one panel (gemm.pair); 19: attention dot products G query rows at a time, the next key block prefetched; several sums of one loop in fewer chains; 20: GEMM threads on whole column blocks (gemm.split_n); 21: B packed in groups of 8 rows across the panels by one thread; 22: GEMM B blocks within half of L2 by default, a paired stage's defaults those of the wide product; 23: a batch of column sums fused with its readers (fuse_loops); 24: GEMM default column blocks that split evenly over the threads under a large L2; 25: operands computed where the GEMM packs them (gemm.prologue); 26: K slices 384 deep by default under AVX-512

/// One stage's kernel as a tile program, with what printing and the
/// report need: its title and kind, the vectors per tuple of its vector
/// loops (TileCppOptions::unroll), the graph's values bound to its Input
/// buffers (in param order) and its Output buffers (in output order), and
/// the identities its lowering applies. `whole_graph`: the one kernel of
/// the whole graph, printed with the graph's ABI (inputs and results empty).
struct StageProgram {
  std::string title, kind;
  tile::Kernel program;
  int unroll = 1;
  bool whole_graph = false;
  std::vector<ir::NodeId> inputs, results;
  std::vector<Reliance> relies_on;
};

/// The kernel of `g` made of `stages`: one whole-graph program printed with
/// g's ABI, or each stage's program in its own namespace with an entry that
/// allocates the values between stages (64-byte aligned), calls the stages
/// in order and copies the outputs no stage wrote in place (parameters,
/// repeats). Requires: each stage's inputs are params or earlier results.
KernelSource print_stage_programs(const ir::Graph& g, const std::vector<StageProgram>& stages, const target::Target& t);

/// The compiler flags a kernel of the CPU code generator needs for `t`
/// (optimisation, the ISA of `t` and no wider, -fopenmp), before "-o <lib>
/// <source>"; `shared`: add -fPIC -shared.
std::vector<std::string> cpu_compile_flags(const target::Target& t, bool shared);

}  // namespace axon::codegen
