// SPEC: tests/gate/specs/layernorm_offset.py  EXPECT: wrong_result
// E[y^2] - E[y]^2 in float32 on rows with mean about 1000 and spread about
// 1: both terms are about 10^6, their difference about 1, and float32 holds
// 7 digits. The variance that comes out is noise.
#include <cmath>

extern "C" void layernorm_offset(const float* X, const float* gamma, const float* beta, float* out0) {
  for (int i = 0; i < 48; ++i) {
    float s = 0.0f, s2 = 0.0f;
    for (int j = 0; j < 160; ++j) {
      const float y = X[i * 160 + j] + 1000.0f;
      s += y;
      s2 += y * y;
    }
    const float mu = s / 160;
    const float var = s2 / 160 - mu * mu;
    const float rstd = 1.0f / std::sqrt(std::fabs(var) + 1e-5f);
    for (int j = 0; j < 160; ++j) out0[i * 160 + j] = (X[i * 160 + j] + 1000.0f - mu) * rstd * gamma[j] + beta[j];
  }
}
