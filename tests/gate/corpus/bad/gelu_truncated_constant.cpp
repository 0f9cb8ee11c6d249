// SPEC: tests/gate/specs/gelu.py  EXPECT: wrong_result
// sqrt(2/pi) written as 0.798 instead of 0.7978845608...
#include <cmath>

extern "C" void gelu(const float* X, float* out0) {
  for (int i = 0; i < 100 * 130; ++i) {
    const float x = X[i];
    out0[i] = 0.5f * x * (1.0f + std::tanh(0.798f * (x + 0.044715f * x * x * x)));
  }
}
