// SPEC: tests/gate/specs/rowsum.py  EXPECT: accept
// Fills a static table of weights (all ones) on the first call, under
// std::call_once; later calls only read it. The table is memory shared by
// every caller, but written once with synchronisation, so concurrent callers
// never race on it. The rows are split over two OpenMP threads, whatever
// OMP_NUM_THREADS says.
#include <mutex>

namespace {
float g_weights[250];
std::once_flag g_filled;
}  // namespace

extern "C" void rowsum(const float* X, float* out0) {
  std::call_once(g_filled, [] {
    for (float& w : g_weights) w = 1.0f;
  });
#pragma omp parallel for num_threads(2)
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += g_weights[j] * X[i * 250 + j];
    out0[i] = s;
  }
}
