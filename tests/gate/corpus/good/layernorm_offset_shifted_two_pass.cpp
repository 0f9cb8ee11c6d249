// SPEC: tests/gate/specs/layernorm_offset.py  EXPECT: accept
// Rounds Y = X + 1000 to float32 as the spec's own float32 evaluation
// would, then uses the centred two-pass variance, which does not cancel.
#include <cmath>

extern "C" void layernorm_offset(const float* X, const float* gamma, const float* beta, float* out0) {
  constexpr int R = 48, C = 160;
  float y[C];
  for (int i = 0; i < R; ++i) {
    float s = 0.0f;
    for (int j = 0; j < C; ++j) s += (y[j] = X[i * C + j] + 1000.0f);
    const float mu = s / C;
    float ss = 0.0f;
    for (int j = 0; j < C; ++j) ss += (y[j] - mu) * (y[j] - mu);
    const float rstd = 1.0f / std::sqrt(ss / C + 1e-5f);
    for (int j = 0; j < C; ++j) out0[i * C + j] = (y[j] - mu) * rstd * gamma[j] + beta[j];
  }
}
