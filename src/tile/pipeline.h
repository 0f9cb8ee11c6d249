// The pass pipelines of the tile IR: a flat list of named passes, each a
// function Kernel -> Kernel, run in order after lower_graph, with the
// verifier after every one and the program kept after each (what
// `axon lower --after PASS` prints).
//
/// Pipelines:
///  - "naive": lower, cascade_sums. One loop nest per op on one thread: the
///    reference point every optimised kernel is measured against.
///  - "loops": lower, matmul_nests, inline_maps, fuse_loops, shrink_buffers,
///    transpose_blocks, collapse_loops, cascade_sums, interchange_sums, parallelize, parallel_sums, vectorize, exp2_scaled,
///    reciprocal_divisors, prefetch_rows, prefetch_next_rows, stream_stores,
///    parallel_chunks (matmul_nests, inline_maps, fuse_loops and shrink_buffers, vectorize
///    with exp2_scaled and reciprocal_divisors, prefetch_rows,
///    prefetch_next_rows, stream_stores and parallel_chunks as the options
///    say; transpose_blocks with a transpose_block; parallelize and
///    parallel_chunks only with threads > 1, and
///    parallel_sums only with split_reductions, which otherwise puts
///    interchange_sums after parallelize). The general lowering for
///    programs no specialised tile schedule takes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "tile/kernel.h"

namespace axon::tile {

struct Pass {
  std::string name;
  std::string doc;  // one line
  std::function<Kernel(const Kernel&)> run;
};

/// Choices of the "loops" pipeline (schedule knobs).
struct LoopsOptions {
  int threads = 1;           // > 1: the outermost loop of each big nest runs on this many threads
  /// With threads > 1: a long reduction outside every parallel loop (a whole
  /// tensor's, or one over a strided axis after interchange_sums gave it
  /// per-lane partials) is split across the threads (parallel_sums). false:
  /// threads only over loops whose iterations write disjoint elements.
  bool split_reductions = true;
  bool inline_maps = true;   // elementwise values are recomputed where read instead of stored
  bool vectorize = true;     // innermost unit-stride loops run as vector lanes
  bool fuse = true;          // loops over the same rows fused, row buffers shrunk to scratch
  bool inline_reused = true; // a cheap map read more often than it has elements is still inlined
  bool exact_lanes = false;  // without vectorize: loops whose lanes compute exactly the serial values
  /// matmul_nests first, with `threads`: float64 matrix products as blocked
  /// Matmuls in register tiles (the compiled float64 reference).
  bool matmul_nests = false;
  /// Partial sums the printer keeps for a vector sum (lanes x accumulator
  /// chains, codegen/c_like/tile_cpp.h); with vectorize, innermost sum blocks
  /// are kCascadeBlock times this long, so each partial still adds at most
  /// kCascadeBlock terms (cascade_sums.h). 1: blocks of kCascadeBlock.
  int sum_partials = 1;
  /// > 0: prefetch_rows with this many bytes ahead (after vectorize).
  int64_t prefetch_bytes = 0;
  /// > 0: prefetch_next_rows (after vectorize): that vector loop of a row fetches the next row's inputs.
  int prefetch_pass = 0;
  /// stream_stores (after vectorize): outputs written past the caches.
  bool stream_stores = false;
  /// > 0 (with threads > 1): parallel_chunks, parallel iterations dealt out this many at a time.
  int64_t chunk = 0;
  /// >= 2: transpose_blocks with blocks of this side (the register transpose's: a vector's lanes).
  int transpose_block = 0;
};

std::vector<Pass> naive_pipeline();
std::vector<Pass> loops_pipeline(const LoopsOptions& o);
/// "naive" or "loops" (with default options); throws axon::Diagnostic otherwise.
std::vector<Pass> pipeline_named(const std::string& name);

struct Stage {
  std::string pass;  // "lower" for the first
  Kernel kernel;
};

/// lower_graph(g), then each pass; every program verified (an ill-formed
/// result throws axon::InternalError naming the pass and the problem).
std::vector<Stage> run_pipeline(const ir::Graph& g, const std::vector<Pass>& passes, const std::string& name = "");

/// The final program of run_pipeline.
Kernel lower_with(const ir::Graph& g, const std::vector<Pass>& passes, const std::string& name = "");

}  // namespace axon::tile
