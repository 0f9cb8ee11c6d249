// SPEC: tests/gate/specs/rowsum.py  EXPECT: compile_error
// Compiles, but defines row_sum instead of the spec's entry rowsum, so
// there is nothing to call.
extern "C" void row_sum(const float* X, float* out0) {
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = s;
  }
}
