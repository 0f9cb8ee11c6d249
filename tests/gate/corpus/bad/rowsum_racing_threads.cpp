// SPEC: tests/gate/specs/rowsum.py  EXPECT: wrong_result
// Four threads add their share of each row straight into the shared output
// element with an unsynchronised read-modify-write. They start together
// and walk the rows in step, so updates are lost.
#include <atomic>
#include <thread>

namespace {
constexpr int R = 90, C = 250, kThreads = 4, kRepeats = 64;
}

extern "C" void rowsum(const float* X, float* out0) {
  volatile float* out = out0;
  for (int i = 0; i < R; ++i) out[i] = 0.0f;
  std::atomic<int> ready{0};
  std::thread workers[kThreads];
  for (int t = 0; t < kThreads; ++t)
    workers[t] = std::thread([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) {
      }
      // Each element is added kRepeats times and the sum scaled back, which
      // only lengthens the window in which updates collide.
      for (int i = 0; i < R; ++i)
        for (int rep = 0; rep < kRepeats; ++rep)
          for (int j = t; j < C; j += kThreads) out[i] = out[i] + X[i * C + j] * (1.0f / kRepeats);
    });
  for (auto& w : workers) w.join();
}
