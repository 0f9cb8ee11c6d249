// A correct row sum that takes milliseconds per call: it sums every row 400
// times over (the volatile store keeps the compiler from dropping the
// repeats). The verdict on it must still be accept.
extern "C" void rowsum(const float* X, float* out0) {
  for (int i = 0; i < 90; ++i) {
    const float* row = X + i * 250;
    float acc = 0.0f;
    for (int rep = 0; rep < 400; ++rep) {
      float s = 0.0f;
      for (int j = 0; j < 250; ++j) s += row[j];
      volatile float keep = s;
      acc = keep;
    }
    out0[i] = acc;
  }
}
