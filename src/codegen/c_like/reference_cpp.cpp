#include "codegen/c_like/reference_cpp.h"

#include <algorithm>

#include "codegen/c_like/tile_cpp.h"
#include "tile/pipeline.h"

namespace axon::codegen {

KernelSource print_reference_cpp(const ir::Graph& g, int threads) {
  tile::LoopsOptions o;
  o.threads = std::max(1, threads);
  o.vectorize = false;  // the vector form only takes f32; the reference is f64
  return print_tile_cpp(tile::lower_with(g, tile::loops_pipeline(o), g.entry), g, "the compiled float64 reference");
}

}  // namespace axon::codegen
