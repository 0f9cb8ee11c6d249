// SPEC: tests/gate/specs/layernorm.py  EXPECT: accept
// Two passes over each row (mean, then centred variance) with the
// reciprocal standard deviation folded into gamma once per row.
#include <cmath>

extern "C" void layernorm(const float* X, const float* gamma, const float* beta, float* out0) {
  constexpr int R = 48, C = 160;
  for (int i = 0; i < R; ++i) {
    const float* x = X + i * C;
    float s = 0.0f;
    for (int j = 0; j < C; ++j) s += x[j];
    const float mu = s / C;
    float ss = 0.0f;
    for (int j = 0; j < C; ++j) {
      const float d = x[j] - mu;
      ss += d * d;
    }
    const float rstd = 1.0f / std::sqrt(ss / C + 1e-5f);
    for (int j = 0; j < C; ++j) out0[i * C + j] = (x[j] - mu) * (rstd * gamma[j]) + beta[j];
  }
}
