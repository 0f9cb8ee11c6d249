// SPEC: tests/gate/specs/transpose.py  EXPECT: wrong_result
// Uses the output's row length (70) as the input's row stride instead of
// 90: every read stays inside X, most of them from the wrong place.
extern "C" void transpose(const float* X, float* out0) {
  constexpr int R = 70, C = 90;
  for (int j = 0; j < C; ++j)
    for (int i = 0; i < R; ++i) out0[j * R + i] = X[i * R + j];
}
