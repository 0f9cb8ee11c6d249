// SPEC: tests/gate/specs/layernorm.py  EXPECT: accept
// Welford's one-pass mean and variance: numerically stable even when the
// mean is large against the spread, unlike E[x^2] - E[x]^2.
#include <cmath>

extern "C" void layernorm(const float* X, const float* gamma, const float* beta, float* out0) {
  constexpr int R = 48, C = 160;
  for (int i = 0; i < R; ++i) {
    const float* x = X + i * C;
    float mean = 0.0f, m2 = 0.0f;
    for (int j = 0; j < C; ++j) {
      const float d = x[j] - mean;
      mean += d / static_cast<float>(j + 1);
      m2 += d * (x[j] - mean);
    }
    const float inv = 1.0f / std::sqrt(m2 / C + 1e-5f);
    for (int j = 0; j < C; ++j) out0[i * C + j] = (x[j] - mean) * inv * gamma[j] + beta[j];
  }
}
