// SPEC: tests/gate/specs/rowsum.py  EXPECT: nondeterministic
// Adds rand()-chosen noise of one unit in the last place to each sum:
// far inside the error budget, but no two calls give the same bits.
#include <cmath>
#include <cstdlib>

extern "C" void rowsum(const float* X, float* out0) {
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = (std::rand() & 1) ? std::nextafter(s, INFINITY) : s;
  }
}
