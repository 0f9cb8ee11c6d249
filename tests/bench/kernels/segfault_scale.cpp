// A kernel for tests/optimize/specs/tanh_scale.py that dies of SIGSEGV on
// its first call. test_bench_cli.py hands it to `axon bench` as the naive
// kernel (AXON_TEST_NAIVE_KERNEL): the workload's process dies in the
// search, and the bench must keep that row, with how it ended, and go on.
#include "kernel.h"

#include <csignal>

extern "C" void scale(const float* a, float* out0) {
  (void)a;
  (void)out0;
  std::raise(SIGSEGV);
}
