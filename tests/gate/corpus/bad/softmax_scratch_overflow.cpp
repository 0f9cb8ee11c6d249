// SPEC: tests/gate/specs/softmax.py  EXPECT: sanitizer
// Correct output, but the heap scratch row is one element short and the
// last exp value is written past its end. Guard pages around the caller's
// buffers cannot see this; AddressSanitizer can.
#include <cmath>
#include <memory>

extern "C" void softmax(const float* X, float* out0) {
  constexpr int R = 64, C = 200;
  std::unique_ptr<float[]> e(new float[C - 1]);  // one too few
  for (int i = 0; i < R; ++i) {
    const float* x = X + i * C;
    float m = x[0];
    for (int j = 1; j < C; ++j) m = x[j] > m ? x[j] : m;
    float s = 0.0f;
    for (int j = 0; j < C; ++j) s += (e[j] = std::exp(x[j] - m));
    for (int j = 0; j < C; ++j) out0[i * C + j] = e[j] / s;
  }
}
