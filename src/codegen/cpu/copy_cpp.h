// The layout-copy code generator: a materialised Transpose (or any strided
// view of a buffer, loop/partition.h) written as a dense row-major buffer.
//
/// Design: the output's last axis q is contiguous in memory, the view's
/// smallest-stride axis p is contiguous in the input; the (p, q) plane is cut
/// into tile x tile blocks, and the blocks (times every other axis) are
/// shared among the threads. With vectors and a unit input stride along p,
/// each W x W register block (8 x 8 with AVX2, 16 x 16 with AVX-512) is
/// loaded as W vectors along p, transposed in registers and stored as W
/// vectors along q (streamed past the caches with nt_store when the output
/// rows are aligned to the store width). Within a tile, `order` 0 walks bands
/// of 16 x `band` input rows left to right (as many sequential read streams,
/// and every step writes `band` whole 64-byte lines, side by side, to each
/// of W output rows), `order` 1 walks bands of W output rows (the input read
/// down a column strip). Past the caches, longer runs of output lines pay:
/// on s8 (2048^2, streaming stores) a band of 4 ran 0.57 ms against 0.73 ms
/// for a band of 1, in a minute when the triad read 55 GB/s. Edges fall back
/// to scalar copies.
/// When q itself has a unit input stride the copy is row by row.
///
/// Requires: the strides address only elements of the input buffer.
/// Ensures: every output element is written exactly once with the input
/// element the view names (a copy: no rounding).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "target/target.h"

namespace axon::codegen {

struct CopyShape {
  std::vector<int64_t> shape;       // of the output (dense row-major)
  std::vector<int64_t> in_strides;  // element strides of the input, one per output axis
  int element_bytes = 4;
  std::string c_type = "float";
};

struct CopySchedule {
  int tile = 32;     // edge of a block in the (p, q) plane
  int threads = 1;
  bool vector = true;  // register transposes (needs 256-bit vectors and 4-byte elements)
  int width = 8;       // the register block's edge: 8 (AVX2) or 16 (AVX-512)
  int order = 0;       // within a tile: 0 input rows streamed, 1 output rows streamed
  int band = 1;        // order 0: 16 x band input rows per band (1, 2, 4, 8), band lines per output row and step
  bool nt_store = false;  // streaming stores of the transposed blocks (vector only; when rows are aligned)
};

/// "" when legal: tile 8 or a multiple of 16 within [16, 512] and of the
/// register block, threads >= 1, vector only with AVX2 or wider and 4-byte
/// elements, 16 x 16 blocks only with AVX-512; band 1, 2, 4 or 8, above 1
/// only for vector order 0 and with 16 x band rows within the tile.
std::string copy_why_illegal(const CopyShape& c, const CopySchedule& s, const target::Target& t);

/// `static void <fn>(const T* in, T* out)`; includes what it needs.
std::string emit_copy_function(const CopyShape& c, const CopySchedule& s, const target::Target& t,
                               const std::string& fn);

}  // namespace axon::codegen
