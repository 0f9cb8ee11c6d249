// SPEC: tests/gate/specs/silu.py  EXPECT: work_after_return
// Returns a correct result, but leaves a detached thread behind that, after
// a short busy wait, overwrites the first row of the output: the answer
// the caller checked is not the answer it keeps.
#include <cmath>
#include <thread>

extern "C" void silu(const float* X, float* out0) {
  for (int i = 0; i < 100 * 130; ++i) out0[i] = X[i] / (1.0f + std::exp(-X[i]));
  std::thread([out0] {
    for (volatile long spin = 0; spin < 3000000; ++spin) {
    }
    for (int i = 0; i < 130; ++i) out0[i] = 0.0f;
  }).detach();
}
