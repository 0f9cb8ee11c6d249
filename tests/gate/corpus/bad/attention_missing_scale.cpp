// SPEC: tests/gate/specs/attention.py  EXPECT: wrong_result
// Forgets the 1 / sqrt(d) on the scores: softmax(Q K^T) V.
#include <cmath>

extern "C" void attention(const float* Q, const float* K, const float* V, float* out0) {
  constexpr int H = 2, S = 64, D = 32;
  float p[S];
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < S; ++i) {
      float m = -INFINITY;
      for (int j = 0; j < S; ++j) {
        float s = 0.0f;
        for (int d = 0; d < D; ++d) s += Q[(h * S + i) * D + d] * K[(h * S + j) * D + d];
        p[j] = s;
        m = s > m ? s : m;
      }
      float denom = 0.0f;
      for (int j = 0; j < S; ++j) denom += (p[j] = std::exp(p[j] - m));
      for (int d = 0; d < D; ++d) {
        float acc = 0.0f;
        for (int j = 0; j < S; ++j) acc += p[j] * V[(h * S + j) * D + d];
        out0[(h * S + i) * D + d] = acc / denom;
      }
    }
}
