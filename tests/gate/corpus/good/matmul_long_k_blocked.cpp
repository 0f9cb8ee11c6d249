// SPEC: tests/gate/specs/matmul_long_k.py  EXPECT: accept
// Walks the inner dimension in blocks of 500, keeping a partial sum per
// output in a local array and adding each block's partial into it: a
// different summation order from the plain loop, well within budget.
extern "C" void matmul_long_k(const float* A, const float* B, float* out0) {
  constexpr int M = 16, K = 4000, N = 12, KB = 500;
  float acc[M * N] = {};
  for (int k0 = 0; k0 < K; k0 += KB)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        float s = 0.0f;
        for (int k = k0; k < k0 + KB; ++k) s += A[i * K + k] * B[k * N + j];
        acc[i * N + j] += s;
      }
  for (int i = 0; i < M * N; ++i) out0[i] = acc[i];
}
