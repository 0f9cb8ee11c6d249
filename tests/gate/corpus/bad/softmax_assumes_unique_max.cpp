// SPEC: tests/gate/specs/softmax.py  EXPECT: wrong_result
// Counts exp(0) = 1 for the maximum once and sums exp(x - max) only over
// elements strictly below it. Exact when the maximum is unique (always, for
// continuous random inputs); when several elements tie for the maximum the
// denominator misses all but one of them.
#include <cmath>

extern "C" void softmax(const float* X, float* out0) {
  for (int i = 0; i < 64; ++i) {
    const float* x = X + i * 200;
    float m = x[0];
    for (int j = 1; j < 200; ++j) m = x[j] > m ? x[j] : m;
    float s = 1.0f;
    for (int j = 0; j < 200; ++j)
      if (x[j] < m) s += std::exp(x[j] - m);
    for (int j = 0; j < 200; ++j) out0[i * 200 + j] = std::exp(x[j] - m) / s;
  }
}
