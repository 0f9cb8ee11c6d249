// SPEC: tests/gate/specs/softmax.py  EXPECT: wrote_input
// Casts away const and stores exp(x - max) back into X to save a buffer.
#include <cmath>

extern "C" void softmax(const float* X_in, float* out0) {
  float* X = const_cast<float*>(X_in);
  for (int i = 0; i < 64; ++i) {
    float* x = X + i * 200;
    float m = x[0];
    for (int j = 1; j < 200; ++j) m = x[j] > m ? x[j] : m;
    float s = 0.0f;
    for (int j = 0; j < 200; ++j) s += (x[j] = std::exp(x[j] - m));
    for (int j = 0; j < 200; ++j) out0[i * 200 + j] = x[j] / s;
  }
}
