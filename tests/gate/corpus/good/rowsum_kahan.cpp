// SPEC: tests/gate/specs/rowsum.py  EXPECT: accept
// Compensated (Kahan) summation: carries the low-order bits lost by each
// addition in a correction term. More accurate than the spec's plain sum.
extern "C" void rowsum(const float* X, float* out0) {
  for (int i = 0; i < 90; ++i) {
    const float* row = X + i * 250;
    float sum = 0.0f, comp = 0.0f;
    for (int j = 0; j < 250; ++j) {
      const float y = row[j] - comp;
      const float t = sum + y;
      comp = (t - sum) - y;
      sum = t;
    }
    out0[i] = sum;
  }
}
