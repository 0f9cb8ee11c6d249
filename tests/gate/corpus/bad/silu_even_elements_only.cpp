// SPEC: tests/gate/specs/silu.py  EXPECT: unwritten_output
// A vector loop with a botched stride: only even-indexed elements are
// written, the odd ones keep whatever the caller left there.
#include <cmath>

extern "C" void silu(const float* X, float* out0) {
  for (int i = 0; i < 100 * 130; i += 2) out0[i] = X[i] / (1.0f + std::exp(-X[i]));
}
