// SPEC: tests/gate/specs/rmsnorm.py  EXPECT: wrong_result
// Adds the epsilon after the square root instead of under it:
// 1 / (sqrt(ms) + 1e-6) rather than 1 / sqrt(ms + 1e-6). Indistinguishable
// for rows of unit scale; for rows whose mean square is near or below the
// epsilon the scale is off by up to a factor of 1000.
#include <cmath>

extern "C" void rmsnorm(const float* X, const float* g, float* out0) {
  for (int i = 0; i < 48; ++i) {
    float ss = 0.0f;
    for (int j = 0; j < 160; ++j) ss += X[i * 160 + j] * X[i * 160 + j];
    const float scale = 1.0f / (std::sqrt(ss / 160) + 1e-6f);
    for (int j = 0; j < 160; ++j) out0[i * 160 + j] = X[i * 160 + j] * scale * g[j];
  }
}
