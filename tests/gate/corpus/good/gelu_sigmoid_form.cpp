// SPEC: tests/gate/specs/gelu.py  EXPECT: accept
// 0.5 x (1 + tanh z) rewritten as x * sigmoid(2z) = x / (1 + exp(-2z)): the
// same function over the reals, with no cancellation for negative x.
#include <cmath>

extern "C" void gelu(const float* X, float* out0) {
  constexpr int kN = 100 * 130;
  constexpr float kC = 0.7978845608028654f, kA = 0.044715f;
  for (int i = 0; i < kN; ++i) {
    const float x = X[i];
    const float z = kC * (x + kA * x * x * x);
    out0[i] = x / (1.0f + std::exp(-2.0f * z));
  }
}
