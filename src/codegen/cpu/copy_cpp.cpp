// emit_copy_function: the tiled layout copy of copy_cpp.h.
#include "codegen/cpu/copy_cpp.h"

#include <algorithm>
#include <sstream>

namespace axon::codegen {

namespace {

struct Plan {
  int p = -1;  // the input-contiguous axis (-1: copy row by row along q)
  int q = -1;  // the output's last axis
  std::vector<int> outer;  // every other axis
};

Plan plan(const CopyShape& c) {
  Plan pl;
  const int r = static_cast<int>(c.shape.size());
  pl.q = r - 1;
  int64_t best = -1;
  for (int a = 0; a + 1 < r; ++a)
    if (c.shape[static_cast<size_t>(a)] > 1 && c.in_strides[static_cast<size_t>(a)] != 0 &&
        (best < 0 || c.in_strides[static_cast<size_t>(a)] < best))
      best = c.in_strides[static_cast<size_t>(a)], pl.p = a;
  // Rows along q are already the cheaper direction to read.
  if (pl.p >= 0 && r > 0 && c.in_strides[static_cast<size_t>(pl.q)] <= best && c.in_strides[static_cast<size_t>(pl.q)] != 0)
    pl.p = -1;
  for (int a = 0; a + 1 < r; ++a)
    if (a != pl.p) pl.outer.push_back(a);
  return pl;
}

const char* kTranspose8x8 = R"(// The 8 x 8 block at src (lanes along p, rows j * sq) stored transposed at dst (rows i * op).
static inline void FN_t8x8STORE(const float* src, int64_t sq, float* dst, int64_t op) {
  __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + sq), r2 = _mm256_loadu_ps(src + 2 * sq),
         r3 = _mm256_loadu_ps(src + 3 * sq), r4 = _mm256_loadu_ps(src + 4 * sq), r5 = _mm256_loadu_ps(src + 5 * sq),
         r6 = _mm256_loadu_ps(src + 6 * sq), r7 = _mm256_loadu_ps(src + 7 * sq);
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3),
         t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
         t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE),
         u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE),
         u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE),
         u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  STOREFN(dst, _mm256_permute2f128_ps(u0, u4, 0x20));
  STOREFN(dst + op, _mm256_permute2f128_ps(u1, u5, 0x20));
  STOREFN(dst + 2 * op, _mm256_permute2f128_ps(u2, u6, 0x20));
  STOREFN(dst + 3 * op, _mm256_permute2f128_ps(u3, u7, 0x20));
  STOREFN(dst + 4 * op, _mm256_permute2f128_ps(u0, u4, 0x31));
  STOREFN(dst + 5 * op, _mm256_permute2f128_ps(u1, u5, 0x31));
  STOREFN(dst + 6 * op, _mm256_permute2f128_ps(u2, u6, 0x31));
  STOREFN(dst + 7 * op, _mm256_permute2f128_ps(u3, u7, 0x31));
}
)";

// The same for a 16 x 16 block in AVX-512 registers: four rounds of lane
// shuffles (pairs of rows, pairs of pairs, then 128-bit quarters twice), so
// each of the 16 stores writes one whole 64-byte line of the output when
// the row is aligned (a streaming store then fills its line at once).
const char* kTranspose16x16 = R"(// The 16 x 16 block at src (lanes along p, rows j * sq) stored transposed at dst (rows i * op).
static inline void FN_t16x16STORE(const float* src, int64_t sq, float* dst, int64_t op) {
  __m512 r[16], t[16];
  for (int k = 0; k < 16; ++k) r[k] = _mm512_loadu_ps(src + k * sq);
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
    STOREFN(dst + k * op, _mm512_shuffle_f32x4(t[k], t[8 + k], 0x88));
    STOREFN(dst + (8 + k) * op, _mm512_shuffle_f32x4(t[k], t[8 + k], 0xDD));
    STOREFN(dst + (4 + k) * op, _mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0x88));
    STOREFN(dst + (12 + k) * op, _mm512_shuffle_f32x4(t[4 + k], t[12 + k], 0xDD));
  }
}
)";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

}  // namespace

std::string copy_why_illegal(const CopyShape& c, const CopySchedule& s, const target::Target& t) {
  if (s.tile < 8 || s.tile > 512 || (s.tile % 16 != 0 && s.tile != 8))
    return "copy: tile " + std::to_string(s.tile) + " is not 8 or a multiple of 16 in [16, 512]";
  if (s.threads < 1 || s.threads > std::max(1, t.cores)) return "copy: threads out of range";
  if (s.vector && (t.isa.vector_bits() < 256 || c.element_bytes != 4)) return "copy: register transposes need AVX2 and 4-byte elements";
  if (s.vector && s.width != 8 && s.width != 16) return "copy: register blocks are 8 x 8 or 16 x 16";
  if (s.vector && s.width == 16 && t.isa.vector_bits() < 512) return "copy: 16 x 16 register transposes need AVX-512";
  if (s.vector && s.tile % s.width != 0) return "copy: tile " + std::to_string(s.tile) + " is no multiple of the register block " + std::to_string(s.width);
  if (s.order != 0 && s.order != 1) return "copy: order is 0 (input rows streamed) or 1 (output rows streamed)";
  if (s.band != 1 && s.band != 2 && s.band != 4 && s.band != 8) return "copy: band is 1, 2, 4 or 8";
  if (s.band != 1 && (!s.vector || s.order != 0))
    return "copy: band " + std::to_string(s.band) + " needs register transposes with input rows streamed (order 0)";
  if (s.band != 1 && 16 * s.band > s.tile)
    return "copy: a band of " + std::to_string(16 * s.band) + " input rows exceeds the tile " + std::to_string(s.tile);
  if (c.shape.size() != c.in_strides.size()) return "copy: one stride per axis";
  return "";
}

std::string emit_copy_function(const CopyShape& c, const CopySchedule& s, const target::Target& t,
                               const std::string& fn) {
  (void)t;
  const Plan pl = plan(c);
  const std::vector<int64_t> out_strides = [&] {
    std::vector<int64_t> st(c.shape.size(), 1);
    for (size_t a = c.shape.size(); a-- > 1;) st[a - 1] = st[a] * c.shape[a];
    return st;
  }();
  const std::string T = c.c_type;
  const bool vec = s.vector && pl.p >= 0 && c.in_strides[static_cast<size_t>(pl.p)] == 1;
  const int W = s.width;  // the register block's edge
  // Rows of the input (along q) handled together: with input rows streamed,
  // 16 x band of them, so every output row gets `band` whole 64-byte lines
  // per step (two 8 x 8 blocks side by side per line when W = 8).
  int64_t outer_count = 1;
  for (int a : pl.outer) outer_count *= c.shape[static_cast<size_t>(a)];
  std::ostringstream o;
  o << "// Layout copy " << fn << ": dense output of shape [";
  for (size_t a = 0; a < c.shape.size(); ++a) o << (a ? ", " : "") << c.shape[a];
  o << "] from input strides [";
  for (size_t a = 0; a < c.in_strides.size(); ++a) o << (a ? ", " : "") << c.in_strides[a];
  o << "]; " << (pl.p < 0 ? "row by row" : std::to_string(s.tile) + " x " + std::to_string(s.tile) + " blocks")
    << (vec ? ", " + std::to_string(W) + " x " + std::to_string(W) + " register transposes, " +
                  (s.order == 0 ? "bands of " + std::to_string(16 * s.band) + " input rows streamed"
                                : "output rows streamed")
            : "")
    << ", " << s.threads << " thread(s).\n";
  o << "#include <cstdint>\n#include <algorithm>\n";
  // Streaming stores need aligned output lines: rows whose length is a whole
  // number of store widths, on a buffer checked once per call.
  const int store_bytes = W * 4;
  const bool nt = vec && s.nt_store && c.shape.back() % W == 0;
  if (vec) {
    const char* text = W == 16 ? kTranspose16x16 : kTranspose8x8;
    const char* store = W == 16 ? "_mm512_storeu_ps" : "_mm256_storeu_ps";
    const char* stream = W == 16 ? "_mm512_stream_ps" : "_mm256_stream_ps";
    o << "#include <immintrin.h>\n";
    o << replace_all(replace_all(replace_all(text, "STOREFN", store), "FN", fn), "STORE", "");
    if (nt) o << replace_all(replace_all(replace_all(text, "STOREFN", stream), "FN", fn), "STORE", "_nt");
  }
  o << "static void " << fn << "(const " << T << "* in, " << T << "* out) {\n";
  const int64_t nq = c.shape.empty() ? 1 : c.shape[static_cast<size_t>(pl.q)];
  const int64_t sq = c.shape.empty() ? 0 : c.in_strides[static_cast<size_t>(pl.q)];
  o << "  constexpr int64_t NQ = " << nq << ", SQ = " << sq << ";\n";
  if (pl.p >= 0) {
    const size_t p = static_cast<size_t>(pl.p);
    o << "  constexpr int64_t NP = " << c.shape[p] << ", SP = " << c.in_strides[p] << ", OP = " << out_strides[p]
      << ", TILE = " << s.tile << ";\n"
      << "  constexpr int64_t TP = (NP + TILE - 1) / TILE, TQ = (NQ + TILE - 1) / TILE;\n"
      << "  constexpr int64_t TOTAL = " << outer_count << " * TP * TQ;\n";
  } else {
    o << "  constexpr int64_t TOTAL = " << outer_count << ";\n";
  }
  if (nt) o << "  const bool nt = reinterpret_cast<uintptr_t>(out) % " << store_bytes << " == 0;\n";
  // With streaming stores each thread fences its own, after its last tile
  // and before the region's closing barrier (an sfence on the calling
  // thread alone orders only that thread's stores).
  const bool fence_per_thread = nt && s.threads > 1;
  if (fence_per_thread)
    o << "#pragma omp parallel num_threads(" << s.threads << ")\n  {\n#pragma omp for schedule(static) nowait\n";
  else if (s.threads > 1)
    o << "#pragma omp parallel for num_threads(" << s.threads << ") schedule(static)\n";
  o << "  for (int64_t w = 0; w < TOTAL; ++w) {\n";
  o << "    int64_t x = " << (pl.p >= 0 ? "w / (TP * TQ)" : "w") << ", in_off = 0, out_off = 0;\n";
  for (size_t k = pl.outer.size(); k-- > 0;) {
    const size_t a = static_cast<size_t>(pl.outer[k]);
    o << "    { const int64_t idx = x % " << c.shape[a] << "; x /= " << c.shape[a] << "; in_off += idx * "
      << c.in_strides[a] << "; out_off += idx * " << out_strides[a] << "; }\n";
  }
  o << "    const " << T << "* src = in + in_off;\n    " << T << "* dst = out + out_off;\n";
  if (pl.p < 0) {
    o << "    for (int64_t j = 0; j < NQ; ++j) dst[j] = src[j * SQ];\n  }\n}\n";
    return o.str();
  }
  o << "    const int64_t rem = w % (TP * TQ), ib = rem / TQ * TILE, jb = rem % TQ * TILE;\n"
    << "    const int64_t ie = std::min(ib + TILE, NP), je = std::min(jb + TILE, NQ);\n";
  if (!vec) {
    o << "    for (int64_t i = ib; i < ie; ++i)\n"
      << "      for (int64_t j = jb; j < je; ++j) dst[i * OP + j] = src[i * SP + j * SQ];\n"
      << "  }\n}\n";
    return o.str();
  }
  // One register block at (i, j): its source and destination, 4-byte elements moved as float bit patterns.
  auto block = [&](const std::string& i, const std::string& j, const std::string& in) {
    const std::string args = "(reinterpret_cast<const float*>(src + " + i + " + " + j + " * SQ), SQ, reinterpret_cast<float*>(dst + " +
                             i + " * OP + " + j + "), OP);\n";
    const std::string t = fn + "_t" + std::to_string(W) + "x" + std::to_string(W);
    return (nt ? in + "if (nt) " + t + "_nt" + args + in + "else " : in) + t + args;
  };
  if (s.order == 0) {
    // Bands of BJ input rows, each read left to right across the tile: BJ
    // sequential streams for the prefetcher, and each step writes W output
    // rows BJ / 16 whole lines each, side by side. The rows a band of
    // 16 x band leaves at the tile's edge go in bands of 16.
    o << "    int64_t j = jb;\n";
    auto bands = [&](int BJ) {
      o << "    for (; j + " << BJ << " <= je; j += " << BJ << ") {\n"
        << "      int64_t i = ib;\n"
        << "      for (; i + " << W << " <= ie; i += " << W << ") {\n";
      for (int jj = 0; jj < BJ; jj += W) o << block("i", jj ? "(j + " + std::to_string(jj) + ")" : "j", "        ");
      o << "      }\n"
        << "      for (; i < ie; ++i)\n"
        << "        for (int64_t jj = j; jj < j + " << BJ << "; ++jj) dst[i * OP + jj] = src[i + jj * SQ];\n"
        << "    }\n";
    };
    bands(16 * s.band);
    if (s.band > 1) bands(16);
    o << "    for (; j < je; ++j)\n"
      << "      for (int64_t i = ib; i < ie; ++i) dst[i * OP + j] = src[i + j * SQ];\n";
  } else {
    // Bands of W output rows, each written left to right across the tile.
    o << "    int64_t i = ib;\n"
      << "    for (; i + " << W << " <= ie; i += " << W << ") {\n"
      << "      int64_t j = jb;\n"
      << "      for (; j + " << W << " <= je; j += " << W << ")\n"
      << block("i", "j", "        ")
      << "      for (; j < je; ++j)\n"
      << "        for (int64_t ii = i; ii < i + " << W << "; ++ii) dst[ii * OP + j] = src[ii + j * SQ];\n"
      << "    }\n"
      << "    for (; i < ie; ++i)\n"
      << "      for (int64_t j = jb; j < je; ++j) dst[i * OP + j] = src[i + j * SQ];\n";
  }
  o << "  }\n" << (nt ? "  if (nt) _mm_sfence();  // streamed rows are visible before return\n" : "")
    << (fence_per_thread ? "  }\n" : "") << "}\n";
  return o.str();
}

}  // namespace axon::codegen
