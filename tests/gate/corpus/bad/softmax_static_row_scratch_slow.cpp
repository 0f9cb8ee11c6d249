// SPEC: tests/gate/specs/softmax.py  EXPECT: not_reentrant
// softmax_static_row_scratch made slow: it waits (a busy loop) between
// writing a row's exponentials into its static array and reading them
// back, so that one call takes tens of milliseconds. The concurrent rounds
// end for slow calls once a few overlapped calls add up to hundreds of
// milliseconds of overlap (docs/gate.md, "Verdict time"), not after 64 of
// them; two calls at once still share the array for most of their time.
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
    for (volatile int spin = 0; spin < 200000; ++spin) {
    }
    for (int j = 0; j < C; ++j) out0[i * C + j] = g_row[j] / s;
  }
}
