// SPEC: tests/gate/specs/transpose_square.py  EXPECT: accept
// Copies X into the output and then transposes the output in place by
// swapping across the diagonal.
#include <cstring>
#include <utility>

extern "C" void transpose_square(const float* X, float* out0) {
  constexpr int N = 64;
  std::memcpy(out0, X, sizeof(float) * N * N);
  for (int i = 0; i < N; ++i)
    for (int j = i + 1; j < N; ++j) std::swap(out0[i * N + j], out0[j * N + i]);
}
