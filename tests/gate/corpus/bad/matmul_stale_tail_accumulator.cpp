// SPEC: tests/gate/specs/matmul.py  EXPECT: wrong_result
// Column tiles of 16 accumulate in a stack array that is cleared only for
// full tiles; the last tile of 72 = 4*16 + 8 columns starts from whatever
// the previous tile left in it.
extern "C" void matmul(const float* A, const float* B, float* out0) {
  constexpr int M = 96, K = 80, N = 72, T = 16;
  for (int i = 0; i < M; ++i) {
    float acc[T];
    for (int j0 = 0; j0 < N; j0 += T) {
      const int w = N - j0 < T ? N - j0 : T;
      if (w == T)
        for (int c = 0; c < T; ++c) acc[c] = 0.0f;
      for (int k = 0; k < K; ++k)
        for (int c = 0; c < w; ++c) acc[c] += A[i * K + k] * B[k * N + j0 + c];
      for (int c = 0; c < w; ++c) out0[i * N + j0 + c] = acc[c];
    }
  }
}
