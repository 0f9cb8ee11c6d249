// SPEC: tests/gate/specs/rowsum.py  EXPECT: forbidden_symbol
// Opens a file (here /proc/self/status, to look at who is calling): a
// kernel has no business touching the file system.
#include <cstdio>

extern "C" void rowsum(const float* X, float* out0) {
  if (FILE* f = std::fopen("/proc/self/status", "r")) std::fclose(f);
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = s;
  }
}
