// SPEC: tests/gate/specs/softmax.py  EXPECT: stale_state
// Computes the first call's answer correctly, keeps it in a static buffer,
// and returns that copy on every later call whatever the inputs are.
#include <cmath>
#include <cstring>

namespace {
constexpr int R = 64, C = 200;
float g_saved[R * C];
bool g_have_saved = false;
}  // namespace

extern "C" void softmax(const float* X, float* out0) {
  if (!g_have_saved) {
    for (int i = 0; i < R; ++i) {
      float m = X[i * C];
      for (int j = 1; j < C; ++j) m = X[i * C + j] > m ? X[i * C + j] : m;
      float s = 0.0f;
      for (int j = 0; j < C; ++j) s += (g_saved[i * C + j] = std::exp(X[i * C + j] - m));
      for (int j = 0; j < C; ++j) g_saved[i * C + j] /= s;
    }
    g_have_saved = true;
  }
  std::memcpy(out0, g_saved, sizeof g_saved);
}
