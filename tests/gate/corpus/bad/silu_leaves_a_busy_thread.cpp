// SPEC: tests/gate/specs/silu.py  EXPECT: work_after_return
// Returns a correct result and never touches the output again, but the
// first call leaves a detached thread behind that keeps a core busy for
// about a second: work the caller did not wait for and a timing would not
// see. Only the check for threads still running after the return sees it.
#include <atomic>
#include <cmath>
#include <thread>

extern "C" void silu(const float* X, float* out0) {
  for (int i = 0; i < 100 * 130; ++i) out0[i] = X[i] / (1.0f + std::exp(-X[i]));
  static std::atomic<bool> started{false};
  if (started.exchange(true)) return;
  std::thread([] {
    for (volatile long spin = 0; spin < 600000000; ++spin) {
    }
  }).detach();
}
