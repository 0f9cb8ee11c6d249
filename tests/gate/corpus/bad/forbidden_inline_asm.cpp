// SPEC: tests/gate/specs/rowsum.py  EXPECT: forbidden_symbol
// Inline assembly: opaque to any source-level check. This one only reads
// the time-stamp counter, but it could do anything.
#include <cstdint>

extern "C" void rowsum(const float* X, float* out0) {
  uint32_t lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  (void)lo;
  (void)hi;
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = s;
  }
}
