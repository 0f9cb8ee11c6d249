// SPEC: tests/gate/specs/rowsum.py  EXPECT: not_reentrant
// Keeps the input pointer in a static for a helper to read, the way C code
// with a global "current matrix" does. Called from two threads at once,
// one call's helper reads the other call's matrix part of the time.
namespace {
const float* volatile g_matrix = nullptr;

float row_sum(int i) {
  float s = 0.0f;
  for (int j = 0; j < 250; ++j) s += g_matrix[i * 250 + j];
  return s;
}
}  // namespace

extern "C" void rowsum(const float* X, float* out0) {
  g_matrix = X;
  for (int i = 0; i < 90; ++i) out0[i] = row_sum(i);
}
