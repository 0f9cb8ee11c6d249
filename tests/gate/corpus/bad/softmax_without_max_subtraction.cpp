// SPEC: tests/gate/specs/softmax.py  EXPECT: wrong_result
// exp(x) / sum(exp(x)) without subtracting the row maximum first: fine for
// standard-normal inputs, inf / inf = NaN once inputs reach about 89.
#include <cmath>

extern "C" void softmax(const float* X, float* out0) {
  for (int i = 0; i < 64; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 200; ++j) s += std::exp(X[i * 200 + j]);
    for (int j = 0; j < 200; ++j) out0[i * 200 + j] = std::exp(X[i * 200 + j]) / s;
  }
}
