// SPEC: tests/gate/specs/matmul.py  EXPECT: accept
// K split into tiles of 32 (the last one holds 16): each tile's partial dot
// product is added into the output, so every element is a sum of three
// partial sums rather than one running sum.
#include <cstring>

extern "C" void matmul(const float* A, const float* B, float* out0) {
  constexpr int M = 96, K = 80, N = 72, KT = 32;
  std::memset(out0, 0, sizeof(float) * M * N);
  for (int k0 = 0; k0 < K; k0 += KT) {
    const int k1 = k0 + KT < K ? k0 + KT : K;
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < N; ++j) {
        float partial = 0.0f;
        for (int k = k0; k < k1; ++k) partial += A[i * K + k] * B[k * N + j];
        out0[i * N + j] += partial;
      }
    }
  }
}
