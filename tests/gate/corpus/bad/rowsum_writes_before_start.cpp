// SPEC: tests/gate/specs/rowsum.py  EXPECT: out_of_bounds
// Uses the element just before the output buffer as a scratch slot.
extern "C" void rowsum(const float* X, float* out0) {
  float* volatile scratch = out0 - 1;
  for (int i = 0; i < 90; ++i) {
    *scratch = 0.0f;
    for (int j = 0; j < 250; ++j) *scratch += X[i * 250 + j];
    out0[i] = *scratch;
  }
}
