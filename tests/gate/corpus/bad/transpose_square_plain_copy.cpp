// SPEC: tests/gate/specs/transpose_square.py  EXPECT: wrong_result
// Copies the matrix instead of transposing it: rows and columns swapped
// back, and the shape still fits.
#include <cstring>

extern "C" void transpose_square(const float* X, float* out0) {
  std::memcpy(out0, X, sizeof(float) * 64 * 64);
}
