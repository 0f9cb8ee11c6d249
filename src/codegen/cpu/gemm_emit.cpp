// emit_gemm_function: the C++ text of one packed, register-blocked GEMM.
#include <sstream>

#include "codegen/cpu/gemm.h"

namespace axon::codegen {

std::string emit_gemm_function(const GemmShape& g, const GemmSchedule& s, const target::Target& t,
                               const std::string& fn) {
  const int bits = t.isa.vector_bits();
  const int W = bits == 512 ? 16 : bits == 256 ? 8 : 1;
  const int NV = s.nr / W;
  const bool omp = s.threads > 1;
  // Enough batches for every thread: each thread takes whole batches with its
  // own packed B (no barriers); otherwise the threads share the row blocks.
  const bool par_batch = omp && g.batch >= s.threads && (g.batch % s.threads == 0 || g.batch >= 4 * s.threads);
  const bool par_rows = omp && !par_batch;
  std::string V, ZERO, LOAD, BCAST, FMA, ADD, STORE;
  if (W == 16) V = "__m512", ZERO = "_mm512_setzero_ps()", LOAD = "_mm512_loadu_ps", BCAST = "_mm512_set1_ps",
               FMA = "_mm512_fmadd_ps", ADD = "_mm512_add_ps", STORE = "_mm512_storeu_ps";
  else if (W == 8) V = "__m256", ZERO = "_mm256_setzero_ps()", LOAD = "_mm256_loadu_ps", BCAST = "_mm256_set1_ps",
                   FMA = "_mm256_fmadd_ps", ADD = "_mm256_add_ps", STORE = "_mm256_storeu_ps";
  std::ostringstream o;
  auto vname = [](int r, int v) { return "c" + std::to_string(r) + "_" + std::to_string(v); };
  o << "// GEMM " << fn << ": C[" << g.batch << "][" << g.M << "][" << g.N << "] " << (g.accumulate ? "+=" : "=")
    << " A x B, K = " << g.K << "; tile " << s.mr << "x" << s.nr << ", kc " << s.kc << ", mc " << s.mc
    << ", nc " << s.nc << ", " << s.threads << " thread(s), " << (W == 1 ? "scalar" : W == 16 ? "AVX-512" : "AVX2")
    << "; A " << (s.pack_a ? "packed" : "read in place") << ", B " << (s.pack_b ? "packed" : "read in place")
    << "\n#include <immintrin.h>\n#include <cstring>\n#include <cstdlib>\n#include <cstdint>\n#include <algorithm>\n";
  if (omp) o << "#include <omp.h>\n";
  // ---- micro-kernel ----
  // Templated on the element strides of its operands: a packed A panel is
  // (row 1, k MR), A read in place is (row A_M, k A_K); a packed B panel has
  // k stride NR, B read in place B_K. Kept out of line: inlined into the
  // driver, the compiler has spilled accumulators of the larger tiles.
  o << "\n// Micro-kernel: a " << s.mr << "x" << s.nr << " tile of C from kb steps of an A panel (" << s.mr
    << " rows, element (r, k) at Ap[r*A_RS + k*A_KS]) and a B panel (" << s.nr << " contiguous floats per k, row k at Bp + k*B_KS).\n"
    << "// Writes C[r*ldc + c] = (beta ? C : 0) + sum_k A(r, k) * B(k, c).\n"
    << "template <int64_t A_RS, int64_t A_KS, int64_t B_KS>\n"
    << "__attribute__((noinline)) static void " << fn << "_micro(int64_t kb, const float* __restrict Ap, const float* __restrict Bp,"
    << " float* __restrict Cp, int64_t ldc, bool beta, const float* next_A) {\n";
  if (W == 1) {
    o << "  float acc[" << s.mr * s.nr << "] = {};\n"
      << "  for (int64_t k = 0; k < kb; ++k)\n    for (int r = 0; r < " << s.mr << "; ++r)\n      for (int c = 0; c < "
      << s.nr << "; ++c) acc[r * " << s.nr << " + c] += Ap[r * A_RS + k * A_KS] * Bp[k * B_KS + c];\n"
      << "  (void)next_A;\n  for (int r = 0; r < " << s.mr << "; ++r)\n    for (int c = 0; c < " << s.nr
      << "; ++c) Cp[r * ldc + c] = (beta ? Cp[r * ldc + c] : 0.0f) + acc[r * " << s.nr << " + c];\n}\n";
  } else {
    o << "  // accumulators: row r, vector v\n";
    for (int r = 0; r < s.mr; ++r) {
      o << "  " << V << " ";
      for (int v = 0; v < NV; ++v) o << vname(r, v) << " = " << ZERO << (v + 1 < NV ? ", " : ";\n");
    }
    if (s.prefetch) o << "  for (int r = 0; r < " << s.mr << "; ++r) _mm_prefetch((const char*)(Cp + r * ldc), _MM_HINT_T0);\n";
    o << "#pragma GCC unroll 4\n  for (int64_t k = 0; k < kb; ++k) {\n";
    if (s.prefetch) o << "    _mm_prefetch((const char*)(next_A + k * " << s.mr << "), _MM_HINT_T0);\n";
    for (int v = 0; v < NV; ++v) o << "    const " << V << " b" << v << " = " << LOAD << "(Bp + k * B_KS + " << v * W << ");\n";
    for (int r = 0; r < s.mr; ++r) {
      o << "    { const " << V << " a = " << BCAST << "(Ap[" << r << " * A_RS + k * A_KS]);";
      for (int v = 0; v < NV; ++v) o << " " << vname(r, v) << " = " << FMA << "(a, b" << v << ", " << vname(r, v) << ");";
      o << " }\n";
    }
    o << "  }\n  if (beta) {\n";
    for (int r = 0; r < s.mr; ++r)
      for (int v = 0; v < NV; ++v)
        o << "    " << vname(r, v) << " = " << ADD << "(" << LOAD << "(Cp + " << r << " * ldc + " << v * W << "), " << vname(r, v) << ");\n";
    o << "  }\n";
    if (!s.prefetch) o << "  (void)next_A;\n";
    for (int r = 0; r < s.mr; ++r)
      for (int v = 0; v < NV; ++v) o << "  " << STORE << "(Cp + " << r << " * ldc + " << v * W << ", " << vname(r, v) << ");\n";
    o << "}\n";
  }
  // ---- driver ----
  o << "\nstatic void " << fn << "(const float* A, const float* B, float* C) {\n"
    << "  constexpr int64_t BATCH = " << g.batch << ", M = " << g.M << ", N = " << g.N << ", K = " << g.K << ";\n"
    << "  constexpr int64_t MR = " << s.mr << ", NR = " << s.nr << ", KC = " << s.kc << ", MC = " << s.mc << ", NC = " << s.nc << ";\n"
    << "  // element strides of A, B and C (batch stride 0 = shared by all batches)\n"
    << "  constexpr int64_t A_B = " << g.a_batch << ", A_M = " << g.a_m << ", A_K = " << g.a_k << ";\n"
    << "  constexpr int64_t B_B = " << g.b_batch << ", B_K = " << g.b_k << ", B_N = " << g.b_n << ";\n"
    << "  constexpr int64_t C_B = " << g.c_batch << ", C_M = " << g.c_m << ", C_N = " << g.c_n << ";\n"
    << "  constexpr bool ACCUMULATE = " << (g.accumulate ? "true" : "false") << ";\n"
    << "  if (K == 0) {  // empty sum\n    if (!ACCUMULATE)\n      for (int64_t b = 0; b < BATCH; ++b)\n"
    << "        for (int64_t m = 0; m < M; ++m)\n          for (int64_t n = 0; n < N; ++n) C[b * C_B + m * C_M + n * C_N] = 0.0f;\n"
    << "    return;\n  }\n"
    << "  constexpr int64_t KC_EFF = std::min(KC, K);\n"
    << "  constexpr int64_t NC_EFF = std::min(NC, (N + NR - 1) / NR * NR);\n"
    << "  constexpr int64_t MC_EFF = std::min(MC, (M + MR - 1) / MR * MR);\n"
    ;
  // With B read in place there is no B block to pack (every panel is whole,
  // see gemm_why_illegal); with A read in place only a panel cut by the edge
  // of M is packed (zero padded), into a scratch of one panel. Row blocks
  // and thread ranges are whole panels, so only M % MR != 0 cuts one; without
  // such a cut neither the scratch nor the packing branch is emitted.
  const bool pack_b = s.pack_b, pack_a = s.pack_a;
  const bool a_edge = g.M % s.mr != 0;
  const bool a_scratch = pack_a || a_edge;
  const std::string bpack_alloc =
      "float* Bpack = static_cast<float*>(std::aligned_alloc(64, (KC_EFF * NC_EFF * 4 + 63) / 64 * 64));\n";
  if (pack_b && !par_batch) o << "  // packed B block: NC_EFF/NR panels of KC_EFF x NR, shared by the threads\n  " << bpack_alloc;
  if (omp) o << "#pragma omp parallel num_threads(" << s.threads << ")\n";
  o << "  {\n";
  if (pack_b && par_batch) o << "    // this thread's packed B block: NC_EFF/NR panels of KC_EFF x NR\n    " << bpack_alloc;
  if (pack_a)
    o << "    // this thread's packed A block: MC_EFF/MR panels of KC_EFF x MR, and a tile for edges\n"
      << "    float* Apack = static_cast<float*>(std::aligned_alloc(64, (KC_EFF * MC_EFF * 4 + 63) / 64 * 64));\n";
  else if (a_edge)
    o << "    // A is read in place; the panel cut by the edge of M is packed here, zero padded\n"
      << "    float* Apack = static_cast<float*>(std::aligned_alloc(64, (KC_EFF * MR * 4 + 63) / 64 * 64));\n";
  o << "    alignas(64) float tile[MR * NR];\n";
  if (par_batch) o << "    // whole batches per thread\n#pragma omp for schedule(static)\n";
  o << "    for (int64_t b = 0; b < BATCH; ++b) {\n"
    << "      const float* Ab = A + b * A_B;\n      const float* Bb = B + b * B_B;\n      float* Cb = C + b * C_B;\n"
    << "      for (int64_t jc = 0; jc < N; jc += NC) {  // column block of C\n"
    << "        const int64_t nb = std::min(NC, N - jc);\n"
    << "        for (int64_t pc = 0; pc < K; pc += KC) {  // K slice\n"
    << "          const int64_t kb = std::min(KC, K - pc);\n"
    << "          const bool beta = ACCUMULATE || pc > 0;\n";
  if (pack_b) {
    o << "          // pack B[pc:pc+kb][jc:jc+nb] into NR-wide panels, zero padded\n";
    if (par_rows) o << "#pragma omp for schedule(static)\n";
    o << "          for (int64_t jp = 0; jp < (nb + NR - 1) / NR; ++jp) {\n"
      << "            float* dst = Bpack + jp * KC_EFF * NR;\n"
      << "            const int64_t j0 = jc + jp * NR, cols = std::min(NR, N - j0);\n"
      << "            for (int64_t k = 0; k < kb; ++k) {\n"
      << "              const float* src = Bb + (pc + k) * B_K + j0 * B_N;\n"
      << "              if (cols == NR) { for (int64_t c = 0; c < NR; ++c) dst[k * NR + c] = src[c * B_N]; }\n"
      << "              else { for (int64_t c = 0; c < NR; ++c) dst[k * NR + c] = c < cols ? src[c * B_N] : 0.0f; }\n"
      << "            }\n          }\n";
  } else {
    o << "          // B is read in place: row k of the panel at column j is Bb + (pc + k) * B_K + j\n";
  }
  o << "          // row blocks of C, shared among the threads\n";
  if (par_rows)
    o << "          // each thread owns a contiguous range of rows (a multiple of MR)\n"
      << "          constexpr int64_t ROWS_PER_THREAD = ((M + " << s.threads << " - 1) / " << s.threads
      << " + MR - 1) / MR * MR;\n"
      << "          const int64_t row_begin = std::min(M, omp_get_thread_num() * ROWS_PER_THREAD);\n"
      << "          const int64_t row_end = std::min(M, row_begin + ROWS_PER_THREAD);\n";
  else
    o << "          const int64_t row_begin = 0, row_end = M;\n";
  o << "          for (int64_t ic = row_begin; ic < row_end; ic += MC) {\n"
    << "            const int64_t mb = std::min(MC, row_end - ic);\n";
  // One A panel's MR x kb pack, zero padded below `rows`, into dst.
  const std::string pack_panel =
      "                for (int64_t r = 0; r < MR; ++r) {\n"
      "                  const float* src = Ab + (i0 + r) * A_M + pc * A_K;\n"
      "                  if (r < rows) { for (int64_t k = 0; k < kb; ++k) dst[k * MR + r] = src[k * A_K]; }\n"
      "                  else { for (int64_t k = 0; k < kb; ++k) dst[k * MR + r] = 0.0f; }\n"
      "                }\n";
  if (pack_a)
    o << "            // pack A[ic:ic+mb][pc:pc+kb] into MR-tall panels, zero padded\n"
      << "            for (int64_t ip = 0; ip < (mb + MR - 1) / MR; ++ip) {\n"
      << "              float* dst = Apack + ip * KC_EFF * MR;\n"
      << "              const int64_t i0 = ic + ip * MR, rows = std::min(MR, ic + mb - i0);\n"
      << pack_panel << "            }\n";
  // The calls for one A panel at Ap over every B panel of the block; `micro`
  // names the instantiation for Ap's strides.
  auto over_b_panels = [&](const std::string& micro, const std::string& indent) {
    std::string bp = pack_b ? "Bpack + (jr / NR) * KC_EFF * NR" : "Bb + pc * B_K + (jc + jr) * B_N";
    std::ostringstream t;
    t << indent << "for (int64_t jr = 0; jr < nb; jr += NR) {\n"
      << indent << "  const float* Bp = " << bp << ";\n"
      << indent << "  const int64_t cols = std::min(NR, nb - jr);\n"
      << indent << "  float* Ct = Cb + (ic + ir) * C_M + (jc + jr) * C_N;\n"
      << indent << "  if (C_N == 1 && rows == MR && cols == NR) {\n"
      << indent << "    " << micro << "(kb, Ap, Bp, Ct, C_M, beta, Anext);\n"
      << indent << "  } else {  // edge tile (or strided C): compute in full, merge the valid part\n"
      << indent << "    " << micro << "(kb, Ap, Bp, tile, NR, false, Anext);\n"
      << indent << "    for (int64_t r = 0; r < rows; ++r)\n"
      << indent << "      for (int64_t c = 0; c < cols; ++c) {\n"
      << indent << "        float& out = Ct[r * C_M + c * C_N];\n"
      << indent << "        out = (beta ? out : 0.0f) + tile[r * NR + c];\n"
      << indent << "      }\n"
      << indent << "  }\n"
      << indent << "}\n";
    return t.str();
  };
  const std::string b_ks = pack_b ? "NR" : "B_K";
  const std::string packed_micro = fn + "_micro<1, MR, " + b_ks + ">";
  o << "            // register tiles: A panel (row) outer so it stays in L1, B panels inner\n"
    << "            for (int64_t ir = 0; ir < mb; ir += MR) {\n"
    << "              const int64_t rows = std::min(MR, mb - ir);\n";
  if (pack_a) {
    o << "              const float* Ap = Apack + (ir / MR) * KC_EFF * MR;\n"
      << "              const float* Anext = ir + MR < mb ? Ap + KC_EFF * MR : Apack;\n"
      << over_b_panels(packed_micro, "              ");
  } else {
    // The calls for the whole panel at rows ic + ir, read in place.
    auto in_place = [&](const std::string& indent) {
      return indent + "const float* Ap = Ab + (ic + ir) * A_M + pc * A_K;\n" + indent +
             "const float* Anext = ir + MR < mb ? Ap + MR * A_M : Ap;\n" +
             over_b_panels(fn + "_micro<A_M, A_K, " + b_ks + ">", indent);
    };
    if (!a_edge)
      o << "              // A in place: every panel is whole (M is a multiple of MR)\n" << in_place("              ");
    else
      o << "              if (rows == MR) {  // A in place\n"
        << in_place("                ")
        << "              } else {  // the edge of M: pack this panel, zero padded\n"
        << "                float* dst = Apack;\n"
        << "                const int64_t i0 = ic + ir;\n"
        << pack_panel
        << "                const float* Ap = Apack;\n"
        << "                const float* Anext = Apack;\n"
        << over_b_panels(packed_micro, "                ")
        << "              }\n";
  }
  o << "            }\n          }\n"
    << (par_rows ? "#pragma omp barrier\n" : "") << "        }\n      }\n    }\n" << (a_scratch ? "    std::free(Apack);\n" : "")
    << (pack_b && par_batch ? "    std::free(Bpack);\n" : "") << "  }\n"
    << (pack_b && !par_batch ? "  std::free(Bpack);\n" : "") << "}\n";
  return o.str();
}

}  // namespace axon::codegen
