#include "codegen/c_like/naive_cpp.h"

#include "codegen/c_like/tile_cpp.h"
#include "tile/pipeline.h"

namespace axon::codegen {

KernelSource emit_naive_cpp(const ir::Graph& g) {
  return print_tile_cpp(tile::lower_with(g, tile::naive_pipeline(), g.entry), g, "the naive kernel");
}

}  // namespace axon::codegen
