// SPEC: tests/gate/specs/silu.py  EXPECT: crash
// Throws a C++ exception out of an extern "C" function.
#include <cmath>
#include <stdexcept>

extern "C" void silu(const float* X, float* out0) {
  for (int i = 0; i < 100 * 130; ++i) {
    if (X[i] > 2.0f) throw std::runtime_error("input out of the range this kernel was tuned for");
    out0[i] = X[i] / (1.0f + std::exp(-X[i]));
  }
}
