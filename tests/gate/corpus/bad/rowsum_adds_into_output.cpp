// SPEC: tests/gate/specs/rowsum.py  EXPECT: output_dependent
// Accumulates straight into the output without clearing it first, as if
// the caller always handed over zeroed memory. Right exactly when the
// output arrives as zeros, wrong for any other content.
extern "C" void rowsum(const float* X, float* out0) {
  for (int i = 0; i < 90; ++i)
    for (int j = 0; j < 250; ++j) out0[i] += X[i * 250 + j];
}
