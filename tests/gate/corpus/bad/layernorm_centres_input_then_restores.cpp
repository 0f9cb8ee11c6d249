// SPEC: tests/gate/specs/layernorm.py  EXPECT: wrote_input
// Centres X in place and adds the mean back before returning, so the input
// looks untouched afterwards; only read-only input pages catch it.
#include <cmath>

extern "C" void layernorm(const float* X_in, const float* gamma, const float* beta, float* out0) {
  float* X = const_cast<float*>(X_in);
  for (int i = 0; i < 48; ++i) {
    float* x = X + i * 160;
    float s = 0.0f;
    for (int j = 0; j < 160; ++j) s += x[j];
    const float mu = s / 160;
    float ss = 0.0f;
    for (int j = 0; j < 160; ++j) {
      x[j] -= mu;
      ss += x[j] * x[j];
    }
    const float rstd = 1.0f / std::sqrt(ss / 160 + 1e-5f);
    for (int j = 0; j < 160; ++j) {
      out0[i * 160 + j] = x[j] * rstd * gamma[j] + beta[j];
      x[j] += mu;
    }
  }
}
