// SPEC: tests/gate/specs/rmsnorm.py  EXPECT: accept
// Rows split among three std::threads, all joined before returning; each
// row belongs to exactly one thread, so the result is deterministic.
#include <cmath>
#include <thread>

namespace {
constexpr int R = 48, C = 160;

void rows(const float* X, const float* g, float* out, int r0, int r1) {
  for (int i = r0; i < r1; ++i) {
    const float* x = X + i * C;
    float ss = 0.0f;
    for (int j = 0; j < C; ++j) ss += x[j] * x[j];
    const float scale = 1.0f / std::sqrt(ss / C + 1e-6f);
    for (int j = 0; j < C; ++j) out[i * C + j] = x[j] * scale * g[j];
  }
}
}  // namespace

extern "C" void rmsnorm(const float* X, const float* g, float* out0) {
  constexpr int kThreads = 3;
  std::thread workers[kThreads];
  for (int t = 0; t < kThreads; ++t)
    workers[t] = std::thread(rows, X, g, out0, t * R / kThreads, (t + 1) * R / kThreads);
  for (auto& w : workers) w.join();
}
