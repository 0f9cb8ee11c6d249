// SPEC: tests/gate/specs/gelu.py  EXPECT: out_of_bounds
// Software-pipelined loop that loads the next element before it finishes
// the current one, including on the last iteration: one read past the end
// of X.
#include <cmath>

extern "C" void gelu(const float* X, float* out0) {
  constexpr int kN = 100 * 130;
  float next = X[0];
  for (int i = 0; i < kN; ++i) {
    const float x = next;
    next = X[i + 1];
    out0[i] = 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
  }
  if (next == 12345.0f) out0[0] = next;  // keeps the last load alive
}
