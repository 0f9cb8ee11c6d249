// SPEC: tests/gate/specs/silu.py  EXPECT: wrong_result
// exp approximated by building the float's bits directly (Schraudolph's
// trick): a few percent of relative error, sold as a fast path.
#include <cstdint>
#include <cstring>

static float fast_exp(float x) {
  if (x < -87.0f) return 0.0f;
  if (x > 88.0f) x = 88.0f;
  const int32_t bits = static_cast<int32_t>(12102203.0f * x + 1064866805.0f);
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

extern "C" void silu(const float* X, float* out0) {
  for (int i = 0; i < 100 * 130; ++i) out0[i] = X[i] / (1.0f + fast_exp(-X[i]));
}
