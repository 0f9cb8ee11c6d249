// SPEC: tests/gate/specs/rowsum.py  EXPECT: accept
// Sums each row from its last column back to its first. The rounding order
// differs from a left-to-right loop, which the error budget allows.
extern "C" void rowsum(const float* X, float* out0) {
  for (int i = 0; i < 90; ++i) {
    const float* row = X + i * 250;
    float acc = 0.0f;
    for (int j = 249; j >= 0; --j) acc += row[j];
    out0[i] = acc;
  }
}
