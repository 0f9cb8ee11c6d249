// In-register transposes of square blocks of 4-byte elements, as C++ source
// text the tile IR's C++ printer pastes into a kernel (codegen/c_like/
// tile_cpp.h prints a W x W Copy that reads along one axis and writes along
// the other as a call of one of them).
//
/// `register_transpose_source(width, streaming)` defines
///   static inline void axon_transpose<W>(const float* src, int64_t ss,
///                                         float* dst, int64_t ds)
/// and, with `streaming`, axon_transpose<W>_nt: W vectors are loaded from
/// src + k * ss (k = 0 .. W-1, lanes along the source's unit axis), moved
/// across lanes and stored as W vectors at dst + k * ds, so that
/// dst[k * ds + l] = src[l * ss + k]. Width 8: AVX (unpack, shuffle, 128-bit
/// permute; three rounds); width 16: AVX-512F (four rounds, the last two on
/// 128-bit quarters), each store one whole 64-byte line when dst rows are
/// aligned. The _nt form stores with _mm*_stream_ps and needs every
/// dst + k * ds aligned to the vector (the caller checks; it also fences with
/// _mm_sfence before the stores must be visible). Loads and plain stores
/// are unaligned. Any 4-byte element type moves as float bit patterns.
/// Requires: width 8 or 16; after #include <immintrin.h> and <cstdint>.
#pragma once

#include <string>

namespace axon::codegen {

std::string register_transpose_source(int width, bool streaming);

}  // namespace axon::codegen
