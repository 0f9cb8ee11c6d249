// emit_gemm_function: the GEMM's tile program (tile/lower_gemm.h), verified
// and printed by the tile IR's C++ printer.
#include <string>

#include "codegen/c_like/tile_cpp.h"
#include "codegen/cpu/stage_knobs.h"
#include "codegen/cpu/gemm.h"
#include "support/diagnostic.h"
#include "tile/verify.h"

namespace axon::codegen {

std::string emit_gemm_function(const GemmShape& g, const GemmSchedule& s, const target::Target& t,
                               const std::string& fn) {
  tile::Kernel k = tile::lower_gemm(g, s, fn);
  tile::require_well_formed(k, "the GEMM's tile program");
  return print_tile_function(k, fn, tile_printer_options(t));
}

}  // namespace axon::codegen
