// SPEC: tests/gate/specs/rowsum.py  EXPECT: out_of_bounds
// Correct sums, then a "<=" loop bound writes one element past the end of
// the 90-element output.
extern "C" void rowsum(const float* X, float* out0) {
  for (int i = 0; i <= 90; ++i) {
    float s = 0.0f;
    if (i < 90)
      for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = s;
  }
}
