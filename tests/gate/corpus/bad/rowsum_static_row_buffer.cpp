// SPEC: tests/gate/specs/rowsum.py  EXPECT: not_reentrant
// Sums into a static array and copies it out at the end. One caller at a
// time gets the right sums; two threads calling at once on different
// buffers write over each other's partial sums, and each copies out a mix.
namespace {
float g_sums[90];
}

extern "C" void rowsum(const float* X, float* out0) {
  for (int i = 0; i < 90; ++i) {
    volatile float* s = &g_sums[i];
    *s = 0.0f;
    for (int j = 0; j < 250; ++j) *s = *s + X[i * 250 + j];
  }
  for (int i = 0; i < 90; ++i) out0[i] = g_sums[i];
}
