// SPEC: tests/gate/specs/rmsnorm.py  EXPECT: wrong_result
// Leaves out the 1e-6 under the square root. On ordinary data it makes no
// visible difference; when the mean square underflows to zero (1e-30
// inputs) it divides by zero.
#include <cmath>

extern "C" void rmsnorm(const float* X, const float* g, float* out0) {
  for (int i = 0; i < 48; ++i) {
    float ss = 0.0f;
    for (int j = 0; j < 160; ++j) ss += X[i * 160 + j] * X[i * 160 + j];
    const float scale = 1.0f / std::sqrt(ss / 160);
    for (int j = 0; j < 160; ++j) out0[i * 160 + j] = X[i * 160 + j] * scale * g[j];
  }
}
