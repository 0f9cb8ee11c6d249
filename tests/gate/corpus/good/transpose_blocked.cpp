// SPEC: tests/gate/specs/transpose.py  EXPECT: accept
// Cache-blocked transpose in 16 x 16 tiles; 70 and 90 leave partial tiles
// on both edges.
extern "C" void transpose(const float* X, float* out0) {
  constexpr int R = 70, C = 90, T = 16;
  for (int i0 = 0; i0 < R; i0 += T)
    for (int j0 = 0; j0 < C; j0 += T)
      for (int i = i0; i < i0 + T && i < R; ++i)
        for (int j = j0; j < j0 + T && j < C; ++j) out0[j * R + i] = X[i * C + j];
}
