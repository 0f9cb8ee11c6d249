// SPEC: tests/gate/specs/rowsum.py  EXPECT: call_count_dependent
// Counts its calls in a static. The first 40 calls sum every column; after
// that it leaves out the last column, betting that a checker only looks
// at the first few dozen calls of a process.
extern "C" void rowsum(const float* X, float* out0) {
  static unsigned long calls = 0;
  const int cols = ++calls > 40 ? 249 : 250;
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < cols; ++j) s += X[i * 250 + j];
    out0[i] = s;
  }
}
