// SPEC: tests/gate/specs/gelu.py  EXPECT: timeout
// ARGS: --timeout 2
// A loop whose exit condition never becomes true (the volatile read keeps
// the compiler from assuming it ends). The call limit is lowered to 2 s
// so that the suite does not wait out the default of 10 s (30 s for the
// sanitized build).
extern "C" void gelu(const float* X, float* out0) {
  volatile int done = 0;
  while (!done) {
  }
  for (int i = 0; i < 100 * 130; ++i) out0[i] = X[i];
}
