// SPEC: tests/gate/specs/rmsnorm.py  EXPECT: accept
// Accumulates the sum of squares in double: on the tiny distribution
// (1e-30 scale) the squares no longer underflow to zero, and the epsilon
// still dominates, as it does in the real-number reference.
#include <cmath>

extern "C" void rmsnorm(const float* X, const float* g, float* out0) {
  constexpr int R = 48, C = 160;
  for (int i = 0; i < R; ++i) {
    const float* x = X + i * C;
    double ss = 0.0;
    for (int j = 0; j < C; ++j) ss += static_cast<double>(x[j]) * x[j];
    const double scale = 1.0 / std::sqrt(ss / C + 1e-6);
    for (int j = 0; j < C; ++j) out0[i * C + j] = static_cast<float>(x[j] * scale * g[j]);
  }
}
