// The B pack of tile/lower_gemm.h in its two orders: panel by panel (jp, k)
// against rows in groups of 8 across the panels (kg, jp, k), for m3's paired
// blocks (2 x 128 and 2 x 256 columns of W1 and W3, rows 2816 floats apart),
// m3's down projection and s1 (256 and 512 columns, rows 1024 floats apart);
// 64 MiB walked before each pack, so that B comes from memory. Thread CPU
// time, median of 9, both orders in turns:
//
//   g++ -O3 -mavx2 -mfma bench/gemm/pack_order.cpp -o /tmp/pack_order && taskset -c 1 /tmp/pack_order
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>
#include <algorithm>
static double now() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
template <int64_t LD, int64_t W, bool PAIR>  // W columns of each half per panel
__attribute__((noinline)) void pack_panels(const float* __restrict B, const float* __restrict B2, float* __restrict P, int64_t jb, int64_t pb, int64_t ncr) {
  constexpr int64_t NR = PAIR ? 2 * W : W;
  for (int64_t jp = 0; jp < ncr / W; ++jp)
    for (int64_t k = 0; k < 256; ++k) {
      if (PAIR) for (int64_t j = 0; j < W; ++j) P[jp * 256 * NR + k * NR + j] = B2[(pb * 256 + k) * LD + jb * ncr + jp * W + j];
      for (int64_t j = 0; j < W; ++j) P[jp * 256 * NR + k * NR + j + (PAIR ? W : 0)] = B[(pb * 256 + k) * LD + jb * ncr + jp * W + j];
    }
}
template <int64_t LD, int64_t W, bool PAIR>
__attribute__((noinline)) void pack_groups(const float* __restrict B, const float* __restrict B2, float* __restrict P, int64_t jb, int64_t pb, int64_t ncr) {
  constexpr int64_t NR = PAIR ? 2 * W : W;
  for (int64_t kg = 0; kg < 32; ++kg)
    for (int64_t jp = 0; jp < ncr / W; ++jp)
      for (int64_t k = 0; k < 8; ++k) {
        if (PAIR) for (int64_t j = 0; j < W; ++j) P[jp * 256 * NR + (kg * 8 + k) * NR + j] = B2[(pb * 256 + kg * 8 + k) * LD + jb * ncr + jp * W + j];
        for (int64_t j = 0; j < W; ++j) P[jp * 256 * NR + (kg * 8 + k) * NR + j + (PAIR ? W : 0)] = B[(pb * 256 + kg * 8 + k) * LD + jb * ncr + jp * W + j];
      }
}
template <int64_t LD, int64_t K, int64_t N, int64_t W, bool PAIR>
void run(const char* name, int64_t ncr) {
  float* B = (float*)aligned_alloc(64, K * N * 4); float* B2 = (float*)aligned_alloc(64, K * N * 4);
  float* P = (float*)aligned_alloc(64, 1 << 20);
  float* F = (float*)aligned_alloc(64, 64 << 20);  // 64 MiB walked between calls: the weights come from memory
  for (int64_t i = 0; i < K * N; ++i) B[i] = i, B2[i] = -i;
  for (int64_t i = 0; i < (16 << 20); ++i) F[i] = 1;
  std::vector<double> t[2];
  volatile float sink = 0;
  for (int r = 0; r < 9; ++r)
    for (int f = 0; f < 2; ++f) {
      float s = 0; for (int64_t i = 0; i < (16 << 20); i += 16) s += F[i];
      sink = sink + s;
      double t0 = now();
      for (int64_t jb = 0; jb < N / ncr; ++jb) for (int64_t pb = 0; pb < K / 256; ++pb)
        (f ? pack_groups<LD, W, PAIR> : pack_panels<LD, W, PAIR>)(B, B2, P, jb, pb, ncr);
      t[f].push_back(now() - t0);
    }
  for (int f = 0; f < 2; ++f) std::sort(t[f].begin(), t[f].end());
  printf("%s\tpanels %.3f ms\tgroups of 8 %.3f ms\t(%.3f)\n", name, t[0][4] * 1e3, t[1][4] * 1e3, t[1][4] / t[0][4]);
  free(B); free(B2); free(P); free(F);
}
int main() {
  for (int rep = 0; rep < 2; ++rep) {
    run<2816, 1024, 2816, 8, true>("m3 pair, 2 x 128 cols (nc 256)", 128);
    run<2816, 1024, 2816, 8, true>("m3 pair, 2 x 256 cols (nc 512)", 256);
    run<1024, 2816, 1024, 16, false>("m3 down, 256 cols", 256);
    run<1024, 1024, 1024, 16, false>("s1, 256 cols", 256);
    run<1024, 1024, 1024, 16, false>("s1, 512 cols", 512);
  }
}
