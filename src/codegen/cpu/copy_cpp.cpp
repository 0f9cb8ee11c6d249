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

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

}  // namespace

std::string copy_why_illegal(const CopyShape& c, const CopySchedule& s, const target::Target& t) {
  if (s.tile < 8 || s.tile > 256 || s.tile % 8 != 0) return "copy: tile " + std::to_string(s.tile) + " is not a multiple of 8 in [8, 256]";
  if (s.threads < 1 || s.threads > std::max(1, t.cores)) return "copy: threads out of range";
  if (s.vector && (t.isa.vector_bits() < 256 || c.element_bytes != 4)) return "copy: register transposes need AVX2 and 4-byte elements";
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
  int64_t outer_count = 1;
  for (int a : pl.outer) outer_count *= c.shape[static_cast<size_t>(a)];
  std::ostringstream o;
  o << "// Layout copy " << fn << ": dense output of shape [";
  for (size_t a = 0; a < c.shape.size(); ++a) o << (a ? ", " : "") << c.shape[a];
  o << "] from input strides [";
  for (size_t a = 0; a < c.in_strides.size(); ++a) o << (a ? ", " : "") << c.in_strides[a];
  o << "]; " << (pl.p < 0 ? "row by row" : std::to_string(s.tile) + " x " + std::to_string(s.tile) + " blocks")
    << (vec ? ", 8 x 8 register transposes" : "") << ", " << s.threads << " thread(s).\n";
  o << "#include <cstdint>\n#include <algorithm>\n";
  const bool nt = vec && s.nt_store && c.shape.back() % 8 == 0;
  if (vec) {
    o << "#include <immintrin.h>\n";
    o << replace_all(replace_all(replace_all(kTranspose8x8, "STOREFN", "_mm256_storeu_ps"), "FN", fn), "STORE", "");
    if (nt) o << replace_all(replace_all(replace_all(kTranspose8x8, "STOREFN", "_mm256_stream_ps"), "FN", fn), "STORE", "_nt");
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
  // Streaming stores need 32-byte aligned rows: the caller's buffer is checked once.
  if (nt) o << "  const bool nt = reinterpret_cast<uintptr_t>(out) % 32 == 0;\n";
  if (s.threads > 1) o << "#pragma omp parallel for num_threads(" << s.threads << ") schedule(static)\n";
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
    << "    const int64_t ie = std::min(ib + TILE, NP), je = std::min(jb + TILE, NQ);\n"
    << "    int64_t i = ib;\n";
  if (vec) {
    o << "    for (; i + 8 <= ie; i += 8) {\n"
      << "      int64_t j = jb;\n"
      << "      for (; j + 8 <= je; j += 8)  // 4-byte elements move as float bit patterns\n"
      << (nt ? "        if (nt) " + fn + "_t8x8_nt(reinterpret_cast<const float*>(src + i + j * SQ), SQ, reinterpret_cast<float*>(dst + i * OP + j), OP); else\n" : "")
      << "        " << fn << "_t8x8(reinterpret_cast<const float*>(src + i + j * SQ), SQ, reinterpret_cast<float*>(dst + i * OP + j), OP);\n"
      << "      for (; j < je; ++j)\n"
      << "        for (int64_t ii = i; ii < i + 8; ++ii) dst[ii * OP + j] = src[ii + j * SQ];\n"
      << "    }\n";
  }
  o << "    for (; i < ie; ++i)\n"
    << "      for (int64_t j = jb; j < je; ++j) dst[i * OP + j] = src[i * SP + j * SQ];\n"
    << "  }\n" << (nt ? "  if (nt) _mm_sfence();  // streamed rows are visible before return\n" : "") << "}\n";
  return o.str();
}

}  // namespace axon::codegen
