// A kernel for specs/tanh_scale.py that is right everywhere but at output 0,
// element [3, 5], which is 1% too large: far over that element's error
// budget. test_failing_baseline.py gives it to `axon optimize` as the naive
// kernel (AXON_TEST_NAIVE_KERNEL).
#include "kernel.h"

#include <cmath>

extern "C" void scale(const float* a, float* out0) {
  for (int i = 0; i < 16 * 64; ++i) out0[i] = std::tanh(a[i]) * 2.0f;
  out0[3 * 64 + 5] *= 1.01f;
}
