// SPEC: tests/gate/specs/softmax.py  EXPECT: accept
// Keeps the exponentials of the row in progress in a static array, as
// softmax_static_row_scratch does, but holds a mutex for the whole call: two
// concurrent callers take turns, so each returns what it would alone.
#include <cmath>
#include <mutex>

namespace {
std::mutex g_lock;
float g_row[200];
}  // namespace

extern "C" void softmax(const float* X, float* out0) {
  std::lock_guard<std::mutex> hold(g_lock);
  for (int i = 0; i < 64; ++i) {
    const float* x = X + i * 200;
    float m = x[0];
    for (int j = 1; j < 200; ++j) m = x[j] > m ? x[j] : m;
    float sum = 0.0f;
    for (int j = 0; j < 200; ++j) sum += (g_row[j] = std::exp(x[j] - m));
    for (int j = 0; j < 200; ++j) out0[i * 200 + j] = g_row[j] / sum;
  }
}
