// SPEC: tests/gate/specs/matmul.py  EXPECT: accept
// Vector intrinsics where the compiler targets them (AVX-512, else AVX2 with
// FMA), plain C++ otherwise. Each row of C is accumulated with broadcast-A
// times a row of B; the 72 columns are 4 full 16-wide vectors plus a masked
// tail of 8 (AVX-512), or 9 full 8-wide vectors (AVX2).
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

namespace {
constexpr int M = 96, K = 80, N = 72;
}

extern "C" void matmul(const float* A, const float* B, float* out0) {
#if defined(__AVX512F__)
  constexpr int kFull = N / 16;                              // 4
  const __mmask16 tail = (__mmask16)((1u << (N % 16)) - 1);  // 8 lanes
  for (int i = 0; i < M; ++i) {
    __m512 acc[kFull + 1];
    for (int v = 0; v <= kFull; ++v) acc[v] = _mm512_setzero_ps();
    for (int k = 0; k < K; ++k) {
      const __m512 a = _mm512_set1_ps(A[i * K + k]);
      const float* b = B + k * N;
      for (int v = 0; v < kFull; ++v) acc[v] = _mm512_fmadd_ps(a, _mm512_loadu_ps(b + 16 * v), acc[v]);
      acc[kFull] = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(tail, b + 16 * kFull), acc[kFull]);
    }
    for (int v = 0; v < kFull; ++v) _mm512_storeu_ps(out0 + i * N + 16 * v, acc[v]);
    _mm512_mask_storeu_ps(out0 + i * N + 16 * kFull, tail, acc[kFull]);
  }
#elif defined(__AVX2__) && defined(__FMA__)
  static_assert(N % 8 == 0, "the AVX2 path has no tail");
  for (int i = 0; i < M; ++i) {
    __m256 acc[N / 8];
    for (int v = 0; v < N / 8; ++v) acc[v] = _mm256_setzero_ps();
    for (int k = 0; k < K; ++k) {
      const __m256 a = _mm256_set1_ps(A[i * K + k]);
      for (int v = 0; v < N / 8; ++v) acc[v] = _mm256_fmadd_ps(a, _mm256_loadu_ps(B + k * N + 8 * v), acc[v]);
    }
    for (int v = 0; v < N / 8; ++v) _mm256_storeu_ps(out0 + i * N + 8 * v, acc[v]);
  }
#else
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      out0[i * N + j] = s;
    }
#endif
}
