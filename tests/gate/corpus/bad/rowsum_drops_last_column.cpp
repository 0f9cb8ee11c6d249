// SPEC: tests/gate/specs/rowsum.py  EXPECT: wrong_result
// Off-by-one loop bound: the last column of every row is never added.
extern "C" void rowsum(const float* X, float* out0) {
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250 - 1; ++j) s += X[i * 250 + j];
    out0[i] = s;
  }
}
