// SPEC: tests/gate/specs/rowsum.py  EXPECT: unwritten_output
// Off-by-one on the row loop: the last output element is never written.
extern "C" void rowsum(const float* X, float* out0) {
  for (int i = 0; i < 90 - 1; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = s;
  }
}
