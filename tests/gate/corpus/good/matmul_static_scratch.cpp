// SPEC: tests/gate/specs/matmul.py  EXPECT: accept
// Keeps its packing buffer in a static array that lives across calls. That
// is state, but not stale state: every call overwrites all of it before
// reading it, so the result depends only on this call's inputs.
namespace {
constexpr int M = 96, K = 80, N = 72;
float g_bt[N * K];  // B transposed; fully rewritten on every call
}  // namespace

extern "C" void matmul(const float* A, const float* B, float* out0) {
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j) g_bt[j * K + k] = B[k * N + j];
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float dot = 0.0f;
      for (int k = K - 1; k >= 0; --k) dot += A[i * K + k] * g_bt[j * K + k];
      out0[i * N + j] = dot;
    }
}
