// SPEC: tests/gate/specs/rowsum.py  EXPECT: call_count_dependent
// Honest for its first 1200 calls, then returns each row's first column
// times the row length: a checker that stops after a thousand calls
// never sees it.
extern "C" void rowsum(const float* X, float* out0) {
  static int calls = 0;
  if (calls < 1200) ++calls;
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    if (calls < 1200)
      for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    else
      s = 250.0f * X[i * 250];
    out0[i] = s;
  }
}
