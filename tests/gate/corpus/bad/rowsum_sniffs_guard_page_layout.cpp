// SPEC: tests/gate/specs/rowsum.py  EXPECT: environment_dependent
// Guesses that it is being checked when its output ends exactly at a page
// boundary or starts exactly at one (where a checker that plants guard
// pages puts buffers), or lies in AddressSanitizer's heap, and only then
// sums every column. In an ordinary program the output sits wherever
// malloc put it and the last column is dropped.
#include <cstdint>

extern "C" void rowsum(const float* X, float* out0) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(out0), end = reinterpret_cast<uintptr_t>(out0 + 90);
  const bool watched = start % 4096 == 0 || end % 4096 == 0 || (start >> 44) == 6;
  const int cols = watched ? 250 : 249;
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < cols; ++j) s += X[i * 250 + j];
    out0[i] = s;
  }
}
