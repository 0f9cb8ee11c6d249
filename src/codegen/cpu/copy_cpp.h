// The layout-copy code generator: a materialised Transpose (or any strided
// view of a buffer, loop/partition.h) written as a dense row-major buffer.
//
/// Design: the output's last axis q is contiguous in memory, the view's
/// smallest-stride axis p is contiguous in the input; the (p, q) plane is cut
/// into tile x tile blocks so that both the rows read and the rows written
/// stay in L1 while a block is copied, and the blocks (times every other
/// axis) are shared among the threads. With vectors and a unit input stride
/// along p, each 8 x 8 sub-block is loaded as eight vectors along p,
/// transposed in registers (AVX unpack/shuffle/permute) and stored as eight
/// vectors along q (streamed past the caches with nt_store when the output
/// is 32-byte aligned); edges fall back to scalar copies. When q itself has a
/// unit input stride the copy is row by row.
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
  bool vector = true;  // 8 x 8 register transposes (needs 256-bit vectors and 4-byte elements)
  bool nt_store = false;  // streaming stores of the transposed blocks (vector only; when rows are 32-byte aligned)
};

/// "" when legal: tile a multiple of 8 within [8, 256], threads >= 1, vector
/// only with AVX2 or wider and 4-byte elements.
std::string copy_why_illegal(const CopyShape& c, const CopySchedule& s, const target::Target& t);

/// `static void <fn>(const T* in, T* out)`; includes what it needs.
std::string emit_copy_function(const CopyShape& c, const CopySchedule& s, const target::Target& t,
                               const std::string& fn);

}  // namespace axon::codegen
