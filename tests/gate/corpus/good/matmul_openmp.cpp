// SPEC: tests/gate/specs/matmul.py  EXPECT: accept
// Rows of C shared out among OpenMP threads. Each element is still summed
// by one thread in a fixed order, so the result does not depend on the
// number of threads or on scheduling.
extern "C" void matmul(const float* A, const float* B, float* out0) {
  constexpr int M = 96, K = 80, N = 72;
#pragma omp parallel for schedule(static)
  for (int i = 0; i < M; ++i) {
    float row[N] = {};
    for (int k = 0; k < K; ++k) {
      const float a = A[i * K + k];
      for (int j = 0; j < N; ++j) row[j] += a * B[k * N + j];
    }
    for (int j = 0; j < N; ++j) out0[i * N + j] = row[j];
  }
}
