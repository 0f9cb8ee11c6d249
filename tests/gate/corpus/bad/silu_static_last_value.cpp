// SPEC: tests/gate/specs/silu.py  EXPECT: not_reentrant
// Passes each element through a static variable on its way from the input
// to the output, as code with a global "current value" does. The window
// between the store and the load is a few instructions, so two concurrent
// callers rarely land in it on a given run; but it is shared memory written
// by every caller without synchronisation, and one that does land in it
// returns the other caller's element.
#include <cmath>

namespace {
volatile float g_x;
}

extern "C" void silu(const float* X, float* out0) {
  for (int i = 0; i < 100 * 130; ++i) {
    g_x = X[i];
    const float x = g_x;
    out0[i] = x / (1.0f + std::exp(-x));
  }
}
