// SPEC: tests/gate/specs/gelu.py  EXPECT: wrong_result
// The exact GELU, 0.5 x (1 + erf(x / sqrt 2)), where the spec asks for the
// tanh approximation; the two differ by up to about 5e-4.
#include <cmath>

extern "C" void gelu(const float* X, float* out0) {
  for (int i = 0; i < 100 * 130; ++i) {
    const float x = X[i];
    out0[i] = 0.5f * x * (1.0f + std::erf(x * 0.70710678f));
  }
}
