// SPEC: tests/gate/specs/matmul.py  EXPECT: wrong_result
// Truncates A and B to bfloat16 (keeps the top 16 bits) before multiplying,
// as a bf16 tensor-core path would: 8 significant bits instead of 24.
#include <cstdint>
#include <cstring>

static float to_bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits &= 0xffff0000u;
  std::memcpy(&x, &bits, 4);
  return x;
}

extern "C" void matmul(const float* A, const float* B, float* out0) {
  constexpr int M = 96, K = 80, N = 72;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int k = 0; k < K; ++k) s += to_bf16(A[i * K + k]) * to_bf16(B[k * N + j]);
      out0[i * N + j] = s;
    }
}
