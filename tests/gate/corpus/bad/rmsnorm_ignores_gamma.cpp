// SPEC: tests/gate/specs/rmsnorm.py  EXPECT: ignores_input
// Normalises correctly but never applies the learned scale g.
#include <cmath>

extern "C" void rmsnorm(const float* X, const float* g, float* out0) {
  (void)g;
  for (int i = 0; i < 48; ++i) {
    float ss = 0.0f;
    for (int j = 0; j < 160; ++j) ss += X[i * 160 + j] * X[i * 160 + j];
    const float scale = 1.0f / std::sqrt(ss / 160 + 1e-6f);
    for (int j = 0; j < 160; ++j) out0[i * 160 + j] = X[i * 160 + j] * scale;
  }
}
