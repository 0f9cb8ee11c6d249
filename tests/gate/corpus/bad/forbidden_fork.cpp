// SPEC: tests/gate/specs/rowsum.py  EXPECT: forbidden_symbol
// Forks a child process that could outlive the call.
#include <unistd.h>

extern "C" void rowsum(const float* X, float* out0) {
  static pid_t child = -1;
  if (child < 0) {
    child = fork();
    if (child == 0) _exit(0);
  }
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = s;
  }
}
