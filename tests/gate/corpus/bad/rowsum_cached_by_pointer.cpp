// SPEC: tests/gate/specs/rowsum.py  EXPECT: stale_state
// Memoises on the input's address: a call with the same pointer gets the
// previous answer back even if the data behind the pointer has changed.
// Fresh buffers for every call would never see the cache; reusing a buffer
// with new contents exposes it.
namespace {
const float* g_last_input = nullptr;
float g_last_output[90];
}  // namespace

extern "C" void rowsum(const float* X, float* out0) {
  if (X != g_last_input) {
    for (int i = 0; i < 90; ++i) {
      float s = 0.0f;
      for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
      g_last_output[i] = s;
    }
    g_last_input = X;
  }
  for (int i = 0; i < 90; ++i) out0[i] = g_last_output[i];
}
