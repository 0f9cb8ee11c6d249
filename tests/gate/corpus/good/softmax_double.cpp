// SPEC: tests/gate/specs/softmax.py  EXPECT: accept
// Evaluates in double precision and rounds once at the end: more accurate
// than float32 throughout, so well inside the budget.
#include <cmath>

extern "C" void softmax(const float* X, float* out0) {
  constexpr int R = 64, C = 200;
  double e[C];
  for (int i = 0; i < R; ++i) {
    const float* x = X + i * C;
    double m = x[0];
    for (int j = 1; j < C; ++j) m = x[j] > m ? x[j] : m;
    double s = 0.0;
    for (int j = 0; j < C; ++j) s += (e[j] = std::exp(x[j] - m));
    for (int j = 0; j < C; ++j) out0[i * C + j] = static_cast<float>(e[j] / s);
  }
}
