// The 8 x 8 (AVX) and 16 x 16 (AVX-512F) transposes of register_transpose.h.
#include "codegen/cpu/register_transpose.h"

#include "support/diagnostic.h"

namespace axon::codegen {

namespace {

// Three rounds: interleave pairs of rows, combine pairs into fours, then
// swap 128-bit halves so each vector holds one whole column.
const char* kTranspose8 = R"(static inline void axon_transpose8NAME(const float* src, int64_t ss, float* dst, int64_t ds) {
  __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + ss), r2 = _mm256_loadu_ps(src + 2 * ss),
         r3 = _mm256_loadu_ps(src + 3 * ss), r4 = _mm256_loadu_ps(src + 4 * ss), r5 = _mm256_loadu_ps(src + 5 * ss),
         r6 = _mm256_loadu_ps(src + 6 * ss), r7 = _mm256_loadu_ps(src + 7 * ss);
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3),
         t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
         t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE),
         u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE),
         u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE),
         u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  STORE(dst, _mm256_permute2f128_ps(u0, u4, 0x20));
  STORE(dst + ds, _mm256_permute2f128_ps(u1, u5, 0x20));
  STORE(dst + 2 * ds, _mm256_permute2f128_ps(u2, u6, 0x20));
  STORE(dst + 3 * ds, _mm256_permute2f128_ps(u3, u7, 0x20));
  STORE(dst + 4 * ds, _mm256_permute2f128_ps(u0, u4, 0x31));
  STORE(dst + 5 * ds, _mm256_permute2f128_ps(u1, u5, 0x31));
  STORE(dst + 6 * ds, _mm256_permute2f128_ps(u2, u6, 0x31));
  STORE(dst + 7 * ds, _mm256_permute2f128_ps(u3, u7, 0x31));
}
)";

// Four rounds: pairs of rows, pairs of pairs, then 128-bit quarters twice,
// so each of the 16 stores writes one whole 64-byte line when the row is
// aligned (a streaming store then fills its line at once).
const char* kTranspose16 = R"(static inline void axon_transpose16NAME(const float* src, int64_t ss, float* dst, int64_t ds) {
  __m512 r[16], t[16];
  for (int k = 0; k < 16; ++k) r[k] = _mm512_loadu_ps(src + k * ss);
  // Interleave rows 2k and 2k+1: t holds pairs (r2k[e], r2k+1[e]) per element e.
  for (int k = 0; k < 8; ++k) {
    t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  // Combine pairs into fours: r[4k + m] holds rows 4k..4k+3 of columns m, m+4, m+8, m+12.
  for (int k = 0; k < 4; ++k) {
    r[4 * k + 0] = _mm512_shuffle_ps(t[4 * k + 0], t[4 * k + 2], 0x44);
    r[4 * k + 1] = _mm512_shuffle_ps(t[4 * k + 0], t[4 * k + 2], 0xEE);
    r[4 * k + 2] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0x44);
    r[4 * k + 3] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0xEE);
  }
  // Gather 128-bit quarters across the row groups, twice, into whole columns.
  for (int k = 0; k < 4; ++k) {
    t[k] = _mm512_shuffle_f32x4(r[k], r[4 + k], 0x88);
    t[4 + k] = _mm512_shuffle_f32x4(r[k], r[4 + k], 0xDD);
    t[8 + k] = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0x88);
    t[12 + k] = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0xDD);
  }
  for (int k = 0; k < 4; ++k) {
    STORE(dst + k * ds, _mm512_shuffle_f32x4(t[k], t[8 + k], 0x88));
    STORE(dst + (8 + k) * ds, _mm512_shuffle_f32x4(t[k], t[8 + k], 0xDD));
    STORE(dst + (4 + k) * ds, _mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0x88));
    STORE(dst + (12 + k) * ds, _mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0xDD));
  }
}
)";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

}  // namespace

std::string register_transpose_source(int width, bool streaming) {
  AXON_CHECK(width == 8 || width == 16) << "register transposes are 8 x 8 or 16 x 16, not " << width;
  const std::string text = width == 8 ? kTranspose8 : kTranspose16;
  const std::string v = width == 8 ? "_mm256" : "_mm512";
  std::string s = replace_all(replace_all(text, "STORE", v + "_storeu_ps"), "NAME", "");
  if (streaming) s += replace_all(replace_all(text, "STORE", v + "_stream_ps"), "NAME", "_nt");
  return s;
}

}  // namespace axon::codegen
