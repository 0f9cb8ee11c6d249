// SPEC: tests/gate/specs/gelu.py  EXPECT: forbidden_symbol
// Reads an environment variable to decide how to behave, which could tell
// a checker run from a production run.
#include <cmath>
#include <cstdlib>

extern "C" void gelu(const float* X, float* out0) {
  const bool sloppy = std::getenv("GELU_FAST") != nullptr;
  for (int i = 0; i < 100 * 130; ++i) {
    const float x = X[i];
    out0[i] = sloppy ? x : 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
  }
}
