// SPEC: tests/gate/specs/rowsum.py  EXPECT: call_count_dependent
// Right on all calls but every 97th, which skips the second half of the
// rows: an occasional wrong answer that no fixed set of early calls
// lands on, and that a check comparing every call finds.
extern "C" void rowsum(const float* X, float* out0) {
  static unsigned calls = 0;
  const int rows = ++calls % 97 == 0 ? 45 : 90;
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    if (i < rows)
      for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = s;
  }
}
