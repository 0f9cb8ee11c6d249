// SPEC: tests/gate/specs/rowsum.py  EXPECT: forbidden_symbol
// Reads the clock, so it could behave differently under a timing loop.
#include <time.h>

extern "C" void rowsum(const float* X, float* out0) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const bool odd_ms = (ts.tv_nsec / 1000000) & 1;
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = odd_ms ? s : s;
  }
}
