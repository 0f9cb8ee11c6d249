// SPEC: tests/gate/specs/matmul.py  EXPECT: accept
// Blocked matmul: B is packed into column panels of 16 (the last panel of
// 72 = 4*16 + 8 is zero-padded), and a 4 x 16 register tile of C is
// accumulated across all of K before it is stored. Scratch is on the heap
// and released before returning.
#include <memory>

namespace {
constexpr int M = 96, K = 80, N = 72, NR = 16, MR = 4;
constexpr int kPanels = (N + NR - 1) / NR;
}  // namespace

extern "C" void matmul(const float* A, const float* B, float* out0) {
  std::unique_ptr<float[]> packed(new float[kPanels * K * NR]);
  for (int p = 0; p < kPanels; ++p)
    for (int k = 0; k < K; ++k)
      for (int c = 0; c < NR; ++c) {
        const int j = p * NR + c;
        packed[(p * K + k) * NR + c] = j < N ? B[k * N + j] : 0.0f;
      }

  for (int i0 = 0; i0 < M; i0 += MR) {
    for (int p = 0; p < kPanels; ++p) {
      float acc[MR][NR] = {};
      const float* panel = packed.get() + p * K * NR;
      for (int k = 0; k < K; ++k) {
        for (int r = 0; r < MR; ++r) {
          const float a = A[(i0 + r) * K + k];
          for (int c = 0; c < NR; ++c) acc[r][c] += a * panel[k * NR + c];
        }
      }
      for (int r = 0; r < MR; ++r)
        for (int c = 0; c < NR; ++c) {
          const int j = p * NR + c;
          if (j < N) out0[(i0 + r) * N + j] = acc[r][c];
        }
    }
  }
}
