// SPEC: tests/gate/specs/gelu.py  EXPECT: work_after_return
// Starts a detached thread that fills in the output a few milliseconds
// later (after a busy wait, so no clock or sleep call is needed) and
// returns at once: the caller sees the result only if it waits.
#include <cmath>
#include <thread>

extern "C" void gelu(const float* X, float* out0) {
  std::thread([X, out0] {
    for (volatile long spin = 0; spin < 3000000; ++spin) {
    }
    for (int i = 0; i < 100 * 130; ++i) {
      const float x = X[i];
      out0[i] = 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    }
  }).detach();
}
