// SPEC: tests/gate/specs/rowsum.py  EXPECT: accept
// Pairwise (tree) reduction: split the range in halves until at most four
// terms are left. Its rounding error grows like log(n), not n.
static float pairwise_sum(const float* p, int n) {
  if (n <= 4) {
    float s = 0.0f;
    for (int k = 0; k < n; ++k) s += p[k];
    return s;
  }
  const int half = n / 2;
  return pairwise_sum(p, half) + pairwise_sum(p + half, n - half);
}

extern "C" void rowsum(const float* X, float* out0) {
  for (int i = 0; i < 90; ++i) out0[i] = pairwise_sum(X + i * 250, 250);
}
