// SPEC: tests/gate/specs/rowsum.py  EXPECT: compile_error
// A typo: the accumulator is declared as "sum" and used as "s".
extern "C" void rowsum(const float* X, float* out0) {
  for (int i = 0; i < 90; ++i) {
    float sum = 0.0f;
    for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = sum;
  }
}
