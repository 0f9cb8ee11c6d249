// SPEC: tests/gate/specs/matmul_square.py  EXPECT: wrong_result
// Computes B @ A instead of A @ B; the shapes agree for square matrices.
extern "C" void matmul_square(const float* A, const float* B, float* out0) {
  constexpr int N = 64;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int k = 0; k < N; ++k) s += B[i * N + k] * A[k * N + j];
      out0[i * N + j] = s;
    }
}
