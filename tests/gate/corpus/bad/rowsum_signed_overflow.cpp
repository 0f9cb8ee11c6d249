// SPEC: tests/gate/specs/rowsum.py  EXPECT: sanitizer
// Correct output, but a hash of the row index overflows a signed int,
// which is undefined behaviour (UndefinedBehaviorSanitizer reports it).
extern "C" void rowsum(const float* X, float* out0) {
  volatile int seed = 0x7fff0000;
  for (int i = 0; i < 90; ++i) {
    const int h = seed + i * 0x10000;  // overflows from i = 1 on
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = (h == 42) ? 0.0f : s;
  }
}
