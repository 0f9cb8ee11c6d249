// SPEC: tests/gate/specs/layernorm.py  EXPECT: wrong_result
// Variance as E[x^2] - E[x]^2 in float32, in one pass. Correct over the
// reals; in float32 it cancels catastrophically once the mean is large
// against the spread, and can even go negative.
#include <cmath>

extern "C" void layernorm(const float* X, const float* gamma, const float* beta, float* out0) {
  for (int i = 0; i < 48; ++i) {
    const float* x = X + i * 160;
    float s = 0.0f, s2 = 0.0f;
    for (int j = 0; j < 160; ++j) {
      s += x[j];
      s2 += x[j] * x[j];
    }
    const float mu = s / 160;
    const float var = s2 / 160 - mu * mu;
    const float rstd = 1.0f / std::sqrt(var + 1e-5f);
    for (int j = 0; j < 160; ++j) out0[i * 160 + j] = (x[j] - mu) * rstd * gamma[j] + beta[j];
  }
}
