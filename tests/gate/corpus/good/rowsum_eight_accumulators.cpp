// SPEC: tests/gate/specs/rowsum.py  EXPECT: accept
// Eight independent accumulators (one per lane of a would-be vector), folded
// at the end; the two columns past the last full group of 8 go to a tail.
extern "C" void rowsum(const float* X, float* out0) {
  constexpr int kCols = 250;
  constexpr int kMain = kCols - kCols % 8;  // 248
  for (int i = 0; i < 90; ++i) {
    const float* row = X + i * kCols;
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int j = 0; j < kMain; j += 8)
      for (int l = 0; l < 8; ++l) acc[l] += row[j + l];
    float tail = 0.0f;
    for (int j = kMain; j < kCols; ++j) tail += row[j];
    out0[i] = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail;
  }
}
