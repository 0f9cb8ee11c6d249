// SPEC: tests/gate/specs/attention.py  EXPECT: accept
// Flash-attention style: for each query, one pass over the keys keeps a
// running maximum, a running denominator and a rescaled output row.
#include <cmath>

extern "C" void attention(const float* Q, const float* K, const float* V, float* out0) {
  constexpr int H = 2, S = 64, D = 32;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (int h = 0; h < H; ++h) {
    const float* q = Q + h * S * D;
    const float* k = K + h * S * D;
    const float* v = V + h * S * D;
    for (int i = 0; i < S; ++i) {
      float m = -INFINITY, denom = 0.0f, acc[D] = {};
      for (int j = 0; j < S; ++j) {
        float s = 0.0f;
        for (int d = 0; d < D; ++d) s += q[i * D + d] * k[j * D + d];
        s *= scale;
        const float m_new = s > m ? s : m;
        const float rescale = std::exp(m - m_new);  // exp(-inf) = 0 on the first key
        const float p = std::exp(s - m_new);
        denom = denom * rescale + p;
        for (int d = 0; d < D; ++d) acc[d] = acc[d] * rescale + p * v[j * D + d];
        m = m_new;
      }
      for (int d = 0; d < D; ++d) out0[(h * S + i) * D + d] = acc[d] / denom;
    }
  }
}
