// SPEC: tests/gate/specs/rowsum.py  EXPECT: wrong_result
// Accumulates in IEEE half precision (_Float16): 11 significant bits, and
// anything beyond 65504 overflows to infinity.
extern "C" void rowsum(const float* X, float* out0) {
  for (int i = 0; i < 90; ++i) {
    _Float16 s = 0;
    for (int j = 0; j < 250; ++j) s += static_cast<_Float16>(X[i * 250 + j]);
    out0[i] = static_cast<float>(s);
  }
}
