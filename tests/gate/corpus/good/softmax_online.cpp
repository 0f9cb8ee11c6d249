// SPEC: tests/gate/specs/softmax.py  EXPECT: accept
// Online softmax: one pass keeps a running maximum and a running sum of
// exp(x - max), rescaling the sum whenever the maximum grows; a second pass
// writes exp(x - max) / sum.
#include <cmath>

extern "C" void softmax(const float* X, float* out0) {
  constexpr int R = 64, C = 200;
  for (int i = 0; i < R; ++i) {
    const float* x = X + i * C;
    float m = -INFINITY, s = 0.0f;
    for (int j = 0; j < C; ++j) {
      if (x[j] > m) {
        s = s * std::exp(m - x[j]) + 1.0f;
        m = x[j];
      } else {
        s += std::exp(x[j] - m);
      }
    }
    const float inv = 1.0f / s;
    for (int j = 0; j < C; ++j) out0[i * C + j] = std::exp(x[j] - m) * inv;
  }
}
