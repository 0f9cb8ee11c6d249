// SPEC: tests/gate/specs/rowsum.py  EXPECT: forbidden_symbol
// Reads the time-stamp counter through the compiler intrinsic; no call to
// any library function appears in the object file.
#include <x86intrin.h>

extern "C" void rowsum(const float* X, float* out0) {
  const unsigned long long t = __rdtsc();
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = (t == 0) ? 0.0f : s;
  }
}
