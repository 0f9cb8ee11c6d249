// stream_triad_kernel: the contract is in stream_triad.h.
#include "codegen/cpu/stream_triad.h"

#include <algorithm>
#include <string>

namespace axon::codegen {

KernelSource stream_triad_kernel(const target::Target& t) {
  const int threads = std::max(1, t.cores);
  KernelSource k;
  k.entry = kStreamTriadEntry;
  k.header = std::string("#pragma once\n#include <stdint.h>\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n") +
             "/* a[i] = b[i] + 3 c[i] for i in [0, n): the STREAM triad, on " + std::to_string(threads) +
             " threads. */\nvoid " + kStreamTriadEntry +
             "(float* a, const float* b, const float* c, int64_t n);\n#ifdef __cplusplus\n}\n#endif\n";
  std::string vector_loop;
  if (t.isa.avx2)
    vector_loop =
        "    const __m256 s = _mm256_set1_ps(3.0f);\n"
        "    for (; k + 8 <= hi; k += 8)\n"
        "      _mm256_storeu_ps(a + k, _mm256_add_ps(_mm256_loadu_ps(b + k), _mm256_mul_ps(s, _mm256_loadu_ps(c + k))));\n";
  k.source = std::string("// The STREAM triad, as axon's bandwidth probe runs it (codegen/cpu/stream_triad.h).\n") +
             "#include \"kernel.h\"\n#include <immintrin.h>\n#include <omp.h>\n\n" + "extern \"C\" void " +
             kStreamTriadEntry + "(float* a, const float* b, const float* c, int64_t n) {\n" +
             "#pragma omp parallel num_threads(" + std::to_string(threads) + ")\n" +
             "  {\n"
             "    // One contiguous part per thread, as the probe splits the range.\n"
             "    const int64_t parts = omp_get_num_threads(), i = omp_get_thread_num();\n"
             "    const int64_t lo = n * i / parts, hi = n * (i + 1) / parts;\n"
             "    int64_t k = lo;\n" +
             vector_loop +
             "    for (; k < hi; ++k) a[k] = b[k] + 3.0f * c[k];\n"
             "  }\n"
             "}\n";
  return k;
}

}  // namespace axon::codegen
