// SPEC: tests/gate/specs/rowsum.py  EXPECT: nondeterministic
// A static call counter decides the summation order (forwards on even
// calls, backwards on odd ones): each answer is within budget, but two
// identical calls in a row disagree in the last bits.
extern "C" void rowsum(const float* X, float* out0) {
  static unsigned calls = 0;
  const bool backwards = (calls++ & 1) != 0;
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    if (backwards)
      for (int j = 249; j >= 0; --j) s += X[i * 250 + j];
    else
      for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = s;
  }
}
