// lower_copy: the tile program of a layout copy, a materialised transpose
// (or any strided view of a buffer, loop/partition.h's LayoutCopy) written
// as a dense row-major output.
//
/// The output's last axis q is contiguous in memory; p is the axis of
/// smallest non-zero input stride among the others (unit axes aside), the
/// direction the input is cheapest to read. When q itself reads at a stride
/// no larger than p's, there is no transpose to block: one Copy per output
/// row (extents {NQ}) under loops over the other axes.
///
/// Otherwise the (p, q) plane is cut into tile x tile blocks. Each
/// dimension splits into full tiles and one edge piece (NP % tile), so all
/// extents are constants and the program is one loop nest per region (full
/// x full, full x edge, edge x full, edge x edge). A region's loops over the
/// other axes and over its tiles are all `parallel` with `threads` (the C++
/// printer collapses them into one loop), the other axes outermost, then the
/// tiles along p and q; with one thread they are serial and ordered by
/// decreasing output stride. Inside a tile, all Copies:
///  - `vector` (register blocks of `width`, needing a unit input stride
///    along p): W x W Copies with source strides [1, SQ] and destination
///    strides [OP, 1], the pattern tile_cpp.h prints as an in-register
///    transpose. `order` 0: bands of 16 x `band` input rows (q), each walked
///    along p with the band's blocks side by side in an `unrolled` loop, then
///    the rows the bands leave in one band of whole blocks; `order` 1: bands
///    of W output rows (p), each walked along q. Rows and columns short of a
///    block are scalar Copies (loops in the printer). `nt_store` marks the
///    block Copies `streaming` when every output row is a whole number of
///    blocks (so blocks start on the rows' alignment).
///  - otherwise one Copy of the tile (extents {tile_p, tile_q}, scalar).
///
/// Requires: shape.size() == in_strides.size(); strides >= 0; every element
/// the strides address lies in an input of in_extent(c) elements; width 8 or
/// 16 and tile a multiple of it when `vector`. Ensures: a kernel named
/// `name` with one Input buffer `input` (dtype[in_extent(c)], param 0) and
/// one Output buffer `output` (dtype[shape], output 0); verify(kernel) is empty;
/// every output element is written exactly once with the input element the
/// view names (a copy: no rounding).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/type.h"
#include "tile/kernel.h"

namespace axon::tile {

struct CopyShape {
  std::vector<int64_t> shape;       // of the output (dense row-major)
  std::vector<int64_t> in_strides;  // element strides of the input, one per output axis
  ir::DType dtype = ir::DType::F32;
  int element_bytes() const { return ir::dtype_bytes(dtype); }
};

struct CopySchedule {
  int tile = 32;     // edge of a block in the (p, q) plane
  int threads = 1;
  bool vector = true;  // W x W register blocks (needs a unit input stride along p)
  int width = 8;       // W: 8 or 16
  int order = 0;       // within a tile: 0 input rows streamed, 1 output rows streamed
  int band = 1;        // order 0: 16 x band input rows per band
  bool nt_store = false;  // streaming stores of the register blocks
};

/// Elements of the input the view can address: 1 + sum (shape[a]-1) * stride[a].
int64_t in_extent(const CopyShape& c);

Kernel lower_copy(const CopyShape& c, const CopySchedule& s, const std::string& name);

}  // namespace axon::tile
