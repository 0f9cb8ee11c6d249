// SPEC: tests/gate/specs/matmul.py  EXPECT: not_reentrant
// Keeps its packing buffer (B transposed) in a static array that every
// call rewrites before reading. From one thread at a time that is right;
// but the buffer is shared, so two threads calling at once on different
// matrices multiply by whichever B was packed last. Reentrancy is part of
// the kernel contract (kernel.h), so this is rejected.
namespace {
constexpr int M = 96, K = 80, N = 72;
float g_bt[N * K];  // B transposed; shared by every caller
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
