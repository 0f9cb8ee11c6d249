// measure_peaks: the roofline's two peaks, measured on the host in half a
// second to several (mapping buffers of twice the last-level cache).
//
// - fp32 FMA throughput: independent chains of vector FMAs held in
//   registers (16 zmm chains with AVX-512, 12 ymm chains with AVX2, plain
//   float chains otherwise), so the loop is limited by FMA issue, not by
//   latency or memory. FLOPs = 2 per lane per FMA.
// - Streaming bandwidth: the STREAM triad a[i] = b[i] + s * c[i] over
//   three buffers of at least 64 MiB each (and at least twice the total
//   last-level cache), on huge pages as the timed kernels' buffers,
//   counting 12 bytes per element (two reads, one write; the
//   write-allocate read is not counted, as in STREAM).
//   `axon bench` also times the same triad, compiled as a kernel
//   (codegen/cpu/stream_triad.h), in the same bursts as the contenders.
// - The bandwidth ceiling (Peaks, bandwidth_ceiling_gbs): on all cores, a
//   read-only sum of one buffer, a copy and a triad with streaming stores,
//   each credited with the traffic it really causes.
//
// Both are run on one thread and on one thread per physical core (the
// threads start together at a latch and the wall time of the slowest is
// what counts), 5 repeats each after a warm-up; the best is reported: a
// peak is what the machine can do, and other tenants only ever slow a
// repeat down, so the median of a shared machine understates it (and makes
// kernels look faster than "peak").
// The vector loops carry function-level target attributes, so axon itself
// builds for baseline x86-64 and only calls them when `t.isa` allows.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "support/affinity.h"
#include "support/buffer_memory.h"
#include "target/target.h"

namespace axon::target {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRepeats = 5;
constexpr double kFmaRepSeconds = 0.02;

// Each returns a value depending on every chain so the loop is not removed.
__attribute__((target("avx512f"), noinline)) float fma_chains_avx512(int64_t iters) {
  const __m512 b = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
  __m512 a0 = _mm512_set1_ps(0.1f), a1 = _mm512_set1_ps(0.2f), a2 = _mm512_set1_ps(0.3f), a3 = _mm512_set1_ps(0.4f);
  __m512 a4 = _mm512_set1_ps(0.5f), a5 = _mm512_set1_ps(0.6f), a6 = _mm512_set1_ps(0.7f), a7 = _mm512_set1_ps(0.8f);
  // Every chain starts from a different value: chains with equal starts are
  // equal forever, and the compiler merges them (halving the work).
  __m512 a8 = _mm512_set1_ps(0.15f), a9 = _mm512_set1_ps(0.25f), a10 = _mm512_set1_ps(0.35f);
  __m512 a11 = _mm512_set1_ps(0.45f), a12 = _mm512_set1_ps(0.55f), a13 = _mm512_set1_ps(0.65f);
  __m512 a14 = _mm512_set1_ps(0.75f), a15 = _mm512_set1_ps(0.85f);
  for (int64_t i = 0; i < iters; ++i) {
    a0 = _mm512_fmadd_ps(a0, b, c), a1 = _mm512_fmadd_ps(a1, b, c), a2 = _mm512_fmadd_ps(a2, b, c);
    a3 = _mm512_fmadd_ps(a3, b, c), a4 = _mm512_fmadd_ps(a4, b, c), a5 = _mm512_fmadd_ps(a5, b, c);
    a6 = _mm512_fmadd_ps(a6, b, c), a7 = _mm512_fmadd_ps(a7, b, c), a8 = _mm512_fmadd_ps(a8, b, c);
    a9 = _mm512_fmadd_ps(a9, b, c), a10 = _mm512_fmadd_ps(a10, b, c), a11 = _mm512_fmadd_ps(a11, b, c);
    a12 = _mm512_fmadd_ps(a12, b, c), a13 = _mm512_fmadd_ps(a13, b, c), a14 = _mm512_fmadd_ps(a14, b, c);
    a15 = _mm512_fmadd_ps(a15, b, c);
  }
  __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                           _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)),
                                     _mm512_add_ps(_mm512_add_ps(a12, a13), _mm512_add_ps(a14, a15))));
  // Summed by hand: GCC 12's _mm512_reduce_add_ps trips -Wmaybe-uninitialized.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  float r = 0;
  for (float v : lanes) r += v;
  return r;
}
constexpr double kFlopsPerIterAvx512 = 16.0 * 16 * 2;

__attribute__((target("avx2,fma"), noinline)) float fma_chains_avx2(int64_t iters) {
  const __m256 b = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
  __m256 a0 = _mm256_set1_ps(0.1f), a1 = _mm256_set1_ps(0.2f), a2 = _mm256_set1_ps(0.3f), a3 = _mm256_set1_ps(0.4f);
  __m256 a4 = _mm256_set1_ps(0.5f), a5 = _mm256_set1_ps(0.6f), a6 = _mm256_set1_ps(0.7f), a7 = _mm256_set1_ps(0.8f);
  __m256 a8 = _mm256_set1_ps(0.15f), a9 = _mm256_set1_ps(0.25f), a10 = _mm256_set1_ps(0.35f);
  __m256 a11 = _mm256_set1_ps(0.45f);  // distinct starts, so no two chains merge
  for (int64_t i = 0; i < iters; ++i) {
    a0 = _mm256_fmadd_ps(a0, b, c), a1 = _mm256_fmadd_ps(a1, b, c), a2 = _mm256_fmadd_ps(a2, b, c);
    a3 = _mm256_fmadd_ps(a3, b, c), a4 = _mm256_fmadd_ps(a4, b, c), a5 = _mm256_fmadd_ps(a5, b, c);
    a6 = _mm256_fmadd_ps(a6, b, c), a7 = _mm256_fmadd_ps(a7, b, c), a8 = _mm256_fmadd_ps(a8, b, c);
    a9 = _mm256_fmadd_ps(a9, b, c), a10 = _mm256_fmadd_ps(a10, b, c), a11 = _mm256_fmadd_ps(a11, b, c);
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                           _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, s);
  float r = 0;
  for (float v : lanes) r += v;
  return r;
}
constexpr double kFlopsPerIterAvx2 = 12.0 * 8 * 2;

__attribute__((noinline)) float fma_chains_scalar(int64_t iters) {
  float a[8] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f};
  for (int64_t i = 0; i < iters; ++i)
    for (float& v : a) v = v * 0.9999999f + 1e-7f;
  float r = 0;
  for (float v : a) r += v;
  return r;
}
constexpr double kFlopsPerIterScalar = 8.0 * 2;

__attribute__((target("avx2"), noinline)) void triad_avx2(float* a, const float* b, const float* c, int64_t n) {
  const __m256 s = _mm256_set1_ps(3.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(a + i, _mm256_add_ps(_mm256_loadu_ps(b + i), _mm256_mul_ps(s, _mm256_loadu_ps(c + i))));
  for (; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
}

__attribute__((noinline)) void triad_scalar(float* a, const float* b, const float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
}

// The ceiling's loops (Peaks): a read-only sum, and a copy and a triad whose
// stores bypass the caches (no line is read before it is written). The
// streaming stores need 32-byte aligned addresses: a head of scalar stores
// gets there.
__attribute__((target("avx2"), noinline)) float sum_avx2(const float* b, int64_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_add_ps(s0, _mm256_loadu_ps(b + i));
    s1 = _mm256_add_ps(s1, _mm256_loadu_ps(b + i + 8));
    s2 = _mm256_add_ps(s2, _mm256_loadu_ps(b + i + 16));
    s3 = _mm256_add_ps(s3, _mm256_loadu_ps(b + i + 24));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  float r = 0;
  for (float v : lanes) r += v;
  for (; i < n; ++i) r += b[i];
  return r;
}

__attribute__((noinline)) float sum_scalar(const float* b, int64_t n) {
  float r0 = 0, r1 = 0, r2 = 0, r3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) r0 += b[i], r1 += b[i + 1], r2 += b[i + 2], r3 += b[i + 3];
  for (; i < n; ++i) r0 += b[i];
  return (r0 + r1) + (r2 + r3);
}

int64_t head_to_32_bytes(const float* a, int64_t n) {
  int64_t head = static_cast<int64_t>((32 - reinterpret_cast<uintptr_t>(a) % 32) % 32 / sizeof(float));
  return std::min(head, n);
}

__attribute__((target("avx2"), noinline)) void nt_copy_avx2(float* a, const float* b, int64_t n) {
  int64_t i = 0, head = head_to_32_bytes(a, n);
  for (; i < head; ++i) a[i] = b[i];
  for (; i + 8 <= n; i += 8) _mm256_stream_ps(a + i, _mm256_loadu_ps(b + i));
  for (; i < n; ++i) a[i] = b[i];
  _mm_sfence();
}

__attribute__((target("avx2"), noinline)) void nt_triad_avx2(float* a, const float* b, const float* c, int64_t n) {
  const __m256 s = _mm256_set1_ps(3.0f);
  int64_t i = 0, head = head_to_32_bytes(a, n);
  for (; i < head; ++i) a[i] = b[i] + 3.0f * c[i];
  for (; i + 8 <= n; i += 8)
    _mm256_stream_ps(a + i, _mm256_add_ps(_mm256_loadu_ps(b + i), _mm256_mul_ps(s, _mm256_loadu_ps(c + i))));
  for (; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
  _mm_sfence();
}

// Runs body(thread_index) on `threads` threads released together; returns
// the wall-clock seconds from the release to the last one finishing.
template <class Body>
double run_together(int threads, const Body& body) {
  if (threads <= 1) {
    auto t0 = Clock::now();
    body(0);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }
  std::latch ready(threads + 1), go(1);
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&, i] {
      ready.count_down();
      go.wait();
      body(i);
    });
  ready.arrive_and_wait();
  auto t0 = Clock::now();
  go.count_down();
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct FmaKernel {
  float (*fn)(int64_t);
  double flops_per_iter;
};

// The description may come from an override file, so the host is asked too:
// running an instruction the host lacks would kill axon.
bool host_has_avx512f() { return __builtin_cpu_supports("avx512f"); }
bool host_has_avx2_fma() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

FmaKernel pick_fma(const Isa& isa) {
  if (isa.avx512f && host_has_avx512f()) return {fma_chains_avx512, kFlopsPerIterAvx512};
  if (isa.avx2 && isa.fma && host_has_avx2_fma()) return {fma_chains_avx2, kFlopsPerIterAvx2};
  return {fma_chains_scalar, kFlopsPerIterScalar};
}

volatile float g_sink;  // keeps the FMA results alive

double fma_gflops(const FmaKernel& k, int threads) {
  // Calibrate on one thread: grow the count until a run takes >= 2 ms, then
  // scale to the target repeat length.
  int64_t iters = 1 << 12;
  double s = 0;
  for (;;) {
    auto t0 = Clock::now();
    g_sink = k.fn(iters);
    s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s >= 0.002 || iters > (int64_t{1} << 34)) break;
    iters *= 4;
  }
  iters = std::max<int64_t>(1, static_cast<int64_t>(iters * (kFmaRepSeconds / std::max(s, 1e-9))));
  std::vector<double> rates;
  for (int r = 0; r < kRepeats; ++r) {
    double secs = run_together(threads, [&](int) { g_sink = k.fn(iters); });
    rates.push_back(k.flops_per_iter * static_cast<double>(iters) * threads / secs / 1e9);
  }
  return *std::max_element(rates.begin(), rates.end());
}

struct FreeDeleter {
  void operator()(float* p) const { support::free_buffer_memory(p); }
};
using Buffer = std::unique_ptr<float, FreeDeleter>;

// On the pages kernels are timed on (huge pages from 4 MiB, as numpy's
// arrays); null when the memory is not there (the probe then reports 0).
Buffer alloc_floats(int64_t n) {
  try {
    return Buffer(static_cast<float*>(support::alloc_buffer_memory(static_cast<size_t>(n) * sizeof(float))));
  } catch (const std::bad_alloc&) {
    return Buffer();
  }
}

// The triad on one thread and on all, and the ceiling's three loops on
// all threads, into p's bandwidths (GB/s).
void measure_bandwidths(const Target& t, int threads, Peaks& p) {
  const int64_t n = stream_triad_elements(t);
  Buffer a = alloc_floats(n), b = alloc_floats(n), c = alloc_floats(n);
  if (!a || !b || !c) return;
  const bool avx2 = t.isa.avx2 && host_has_avx2_fma();
  auto triad = avx2 ? triad_avx2 : triad_scalar;
  auto chunk = [&](int i, int parts, auto&& f) {
    int64_t lo = n * i / parts, hi = n * (i + 1) / parts;
    f(lo, hi);
  };
  // First touch by the threads that will stream each part (NUMA placement).
  run_together(threads, [&](int i) {
    chunk(i, threads, [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) a.get()[k] = 0.0f, b.get()[k] = 1.0f, c.get()[k] = 2.0f;
    });
  });
  // The best rate of `loop(lo, hi)` over the repeats, each moving
  // bytes_per_element per element of [0, n).
  auto measure = [&](int parts, double bytes_per_element, auto&& loop) {
    const double bytes = bytes_per_element * static_cast<double>(n);
    std::vector<double> rates;
    for (int r = 0; r <= kRepeats; ++r) {
      double secs = run_together(parts, [&](int i) { chunk(i, parts, loop); });
      if (r > 0) rates.push_back(bytes / secs / 1e9);  // r == 0 is the warm-up
    }
    return *std::max_element(rates.begin(), rates.end());
  };
  auto triad_part = [&](int64_t lo, int64_t hi) { triad(a.get() + lo, b.get() + lo, c.get() + lo, hi - lo); };
  p.stream_gbs_1t = measure(1, 12.0, triad_part);
  p.stream_gbs_all = threads > 1 ? measure(threads, 12.0, triad_part) : p.stream_gbs_1t;
  std::vector<float> sums(static_cast<size_t>(threads));
  p.read_gbs_all = measure(threads, 4.0, [&](int64_t lo, int64_t hi) {
    float s = avx2 ? sum_avx2(b.get() + lo, hi - lo) : sum_scalar(b.get() + lo, hi - lo);
    sums[static_cast<size_t>((lo * threads + n - 1) / n)] = s;  // the part's index: lo = floor(n i / threads)
  });
  if (avx2) {  // streaming stores need the vector instructions
    p.nt_copy_gbs_all = measure(threads, 8.0, [&](int64_t lo, int64_t hi) { nt_copy_avx2(a.get() + lo, b.get() + lo, hi - lo); });
    p.nt_triad_gbs_all = measure(threads, 12.0, [&](int64_t lo, int64_t hi) {
      nt_triad_avx2(a.get() + lo, b.get() + lo, c.get() + lo, hi - lo);
    });
  }
  g_sink = a.get()[n / 2] + sums[0];
}

}  // namespace

void measure_peaks(Target& t) {
  // The probe's threads inherit this thread's mask: every core the process
  // started with, even after an OpenMP region pinned this thread to one.
  support::ScopedStartMask all_cpus;
  const int threads = std::max(1, t.cores);
  FmaKernel k = pick_fma(t.isa);
  t.peaks.fma_gflops_1t = fma_gflops(k, 1);
  t.peaks.fma_gflops_all = threads > 1 ? fma_gflops(k, threads) : t.peaks.fma_gflops_1t;
  measure_bandwidths(t, threads, t.peaks);
}

}  // namespace axon::target
