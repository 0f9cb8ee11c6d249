// SPEC: tests/gate/specs/softmax.py  EXPECT: not_reentrant
// Keeps the exponentials of the row in progress in a static array between
// its two passes. Fine from one thread; two concurrent calls share the
// array, so one call divides the other call's exponentials by its own sum.
#include <cmath>

namespace {
float g_row[200];
}

extern "C" void softmax(const float* X, float* out0) {
  constexpr int R = 64, C = 200;
  for (int i = 0; i < R; ++i) {
    const float* x = X + i * C;
    float m = -INFINITY;
    for (int j = 0; j < C; ++j) m = std::fmax(m, x[j]);
    float s = 0.0f;
    for (int j = 0; j < C; ++j) {
      g_row[j] = std::exp(x[j] - m);
      s += g_row[j];
    }
    for (int j = 0; j < C; ++j) out0[i * C + j] = g_row[j] / s;
  }
}
