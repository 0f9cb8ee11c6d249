// SPEC: tests/gate/specs/rowsum.py  EXPECT: wrong_result
// Estimates each row sum from a strided subsample: every other element,
// doubled. Half the work, and right only on average.
extern "C" void rowsum(const float* X, float* out0) {
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; j += 2) s += X[i * 250 + j];
    out0[i] = 2.0f * s;
  }
}
