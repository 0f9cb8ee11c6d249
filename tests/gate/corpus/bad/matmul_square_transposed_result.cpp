// SPEC: tests/gate/specs/matmul_square.py  EXPECT: wrong_result
// Stores C[i][j] at [j][i]: the transposed product. The output has the
// right shape because the matrix is square.
extern "C" void matmul_square(const float* A, const float* B, float* out0) {
  constexpr int N = 64;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int k = 0; k < N; ++k) s += A[i * N + k] * B[k * N + j];
      out0[j * N + i] = s;
    }
}
