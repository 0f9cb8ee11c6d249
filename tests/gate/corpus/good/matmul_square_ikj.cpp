// SPEC: tests/gate/specs/matmul_square.py  EXPECT: accept
// i-k-j loop order: each row of C is built up as a sum of scaled rows of B,
// accumulated directly in the output.
extern "C" void matmul_square(const float* A, const float* B, float* out0) {
  constexpr int N = 64;
  for (int i = 0; i < N; ++i) {
    float* c = out0 + i * N;
    for (int j = 0; j < N; ++j) c[j] = 0.0f;
    for (int k = 0; k < N; ++k) {
      const float a = A[i * N + k];
      for (int j = 0; j < N; ++j) c[j] += a * B[k * N + j];
    }
  }
}
