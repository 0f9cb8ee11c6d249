// SPEC: tests/gate/specs/rowsum.py  EXPECT: crash
// Gives up with abort() when a row sum comes out negative, which happens
// for about half the rows.
#include <cstdlib>

extern "C" void rowsum(const float* X, float* out0) {
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    if (s < 0.0f) std::abort();
    out0[i] = s;
  }
}
