// SPEC: tests/gate/specs/rowsum.py  EXPECT: forbidden_symbol
// Calls into the kernel directly through syscall(2), bypassing any list of
// libc functions.
#include <sys/syscall.h>
#include <unistd.h>

extern "C" void rowsum(const float* X, float* out0) {
  const long pid = syscall(SYS_getpid);
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = pid == 0 ? 0.0f : s;
  }
}
