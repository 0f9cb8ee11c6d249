// SPEC: tests/gate/specs/softmax.py  EXPECT: ignores_input
// Never reads X: returns 1/200 everywhere, the softmax of a constant row.
// Right only for inputs with no spread at all.
extern "C" void softmax(const float* X, float* out0) {
  (void)X;
  for (int i = 0; i < 64 * 200; ++i) out0[i] = 1.0f / 200.0f;
}
