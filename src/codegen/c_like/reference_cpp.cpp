#include "codegen/c_like/reference_cpp.h"

#include <algorithm>

#include "codegen/c_like/tile_cpp.h"
#include "tile/pipeline.h"

namespace axon::codegen {

KernelSource print_reference_cpp(const ir::Graph& g, int threads) {
  tile::LoopsOptions o;
  o.threads = std::max(1, threads);
  o.vectorize = false;       // the vector form only takes f32; the reference is f64
  o.exact_lanes = true;      // einsums' rows and maps as `omp simd`, rounding as the serial loop
  o.inline_reused = false;   // contraction operands stored once, read along their last axis
  o.matmul_nests = true;     // float64 matrix products in register tiles, each sum serial as the interpreter's
  TileCppOptions p;
  p.scratch_pool = true;  // temporaries kept across calls: one set's pages are not faulted in again by the next
  return print_tile_cpp(tile::lower_with(g, tile::loops_pipeline(o), g.entry), g, "the compiled float64 reference", p);
}

}  // namespace axon::codegen
