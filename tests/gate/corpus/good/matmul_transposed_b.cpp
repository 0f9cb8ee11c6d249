// SPEC: tests/gate/specs/matmul.py  EXPECT: accept
// Copies B into a transposed heap scratch so that both operands of every
// dot product are contiguous, then frees the scratch before returning.
#include <cstdlib>

extern "C" void matmul(const float* A, const float* B, float* out0) {
  constexpr int M = 96, K = 80, N = 72;
  float* bt = static_cast<float*>(std::malloc(sizeof(float) * K * N));
  if (!bt) return;
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j) bt[j * K + k] = B[k * N + j];
  for (int i = 0; i < M; ++i) {
    const float* a = A + i * K;
    for (int j = 0; j < N; ++j) {
      const float* b = bt + j * K;
      float dot = 0.0f;
      for (int k = 0; k < K; ++k) dot += a[k] * b[k];
      out0[i * N + j] = dot;
    }
  }
  std::free(bt);
}
