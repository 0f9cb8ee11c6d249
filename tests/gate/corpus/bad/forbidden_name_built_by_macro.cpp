// SPEC: tests/gate/specs/rowsum.py  EXPECT: forbidden_symbol
// Spells popen with token pasting so that the word never appears in the
// source; the compiled object still calls it.
#include <cstdio>

#define GLUE(a, b) a##b
#define SHELL_OPEN GLUE(po, pen)
#define SHELL_CLOSE GLUE(pc, lose)

extern "C" void rowsum(const float* X, float* out0) {
  if (FILE* p = SHELL_OPEN("true", "r")) SHELL_CLOSE(p);
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = s;
  }
}
