// SPEC: tests/gate/specs/matmul.py  EXPECT: accept
// Keeps its packing buffer (B transposed) in a thread_local array that
// lives across calls. That is state, but neither stale nor shared: each
// call rewrites all of it before reading it, and each calling thread has
// its own, so concurrent calls on different buffers stay independent.
namespace {
constexpr int M = 96, K = 80, N = 72;
thread_local float t_bt[N * K];  // B transposed; one per calling thread
}  // namespace

extern "C" void matmul(const float* A, const float* B, float* out0) {
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j) t_bt[j * K + k] = B[k * N + j];
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float dot = 0.0f;
      for (int k = K - 1; k >= 0; --k) dot += A[i * K + k] * t_bt[j * K + k];
      out0[i * N + j] = dot;
    }
}
