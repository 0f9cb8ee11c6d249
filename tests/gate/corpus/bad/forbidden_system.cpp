// SPEC: tests/gate/specs/rowsum.py  EXPECT: forbidden_symbol
// Runs a shell command from inside the kernel.
#include <cstdlib>

extern "C" void rowsum(const float* X, float* out0) {
  static int ran = std::system("true");
  (void)ran;
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = s;
  }
}
