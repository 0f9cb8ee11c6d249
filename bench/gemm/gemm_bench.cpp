// Timing driver for the GEMM code generator: emits kernels for a few shapes
// and schedules, compiles them with -O3 -march=native -fopenmp, and prints
// GFLOP/s next to the measured FMA peak of the same run (see README.md).
//
// Usage: gemm_bench [threads] [reps]   (mr,nr,kc,mc,nc overrides: env GEMM_SCHED="mr nr kc mc nc")
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "codegen/cpu/gemm.h"

using namespace axon;

namespace {

const char* kPeakSource = R"(
#include <immintrin.h>
#include <omp.h>
// 12 independent FMA chains per thread: enough to cover latency x pipes.
extern "C" double fma_peak_flops(long iters, int threads) {
  double t0 = omp_get_wtime();
  float sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
  {
    __m512 acc[12];
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
    const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.0001f);
    for (long it = 0; it < iters; ++it)
      for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    __m512 s = acc[0];
    for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, acc[i]);
    sink += _mm512_reduce_add_ps(s);
  }
  double t = omp_get_wtime() - t0;
  return (sink == 12345.f ? 1 : 0) + double(iters) * threads * 12 * 16 * 2 / t;
}
)";

void* build(const std::string& src, const std::string& name) {
  std::string dir = "/tmp/axon-gemm-bench";
  std::system(("mkdir -p " + dir).c_str());
  std::string cpp = dir + "/" + name + ".cpp", so = dir + "/" + name + ".so";
  std::ofstream(cpp) << src;
  std::string cmd = "c++ -O3 -march=native -fopenmp -fPIC -shared -o " + so + " " + cpp;
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "compile failed: %s\n", cmd.c_str());
    std::exit(1);
  }
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_NODELETE);
  if (!h) {
    std::fprintf(stderr, "%s\n", dlerror());
    std::exit(1);
  }
  return h;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  int reps = argc > 2 ? std::atoi(argv[2]) : 15;
  target::Target t;
  t.name = "bench";
  t.cores = t.threads = threads;
  t.caches = {{1, 32 << 10, 64, 1}, {2, 1 << 20, 64, 1}, {3, 32 << 20, 64, threads}};
  t.isa.avx2 = t.isa.fma = t.isa.avx512f = t.isa.avx512bw = t.isa.avx512vl = t.isa.avx512dq = true;

  auto peak_fn = reinterpret_cast<double (*)(long, int)>(dlsym(build(kPeakSource, "peak"), "fma_peak_flops"));
  auto peak = [&] {
    std::vector<double> p;
    for (int i = 0; i < 5; ++i) p.push_back(peak_fn(20'000'000, threads));
    return *std::max_element(p.begin(), p.end());  // interference only lowers it
  };
  double peak_before = peak();
  std::printf("FMA peak (%d threads, best of 5): %.1f GFLOP/s\n", threads, peak_before / 1e9);
  struct Line { std::string text; double gflops; };
  std::vector<Line> lines;

  struct Run { const char* name; codegen::GemmShape g; };
  std::vector<Run> runs = {{"1024^3", codegen::dense_gemm_shape(1, 1024, 1024, 1024)},
                           {"8x512^3", codegen::dense_gemm_shape(8, 512, 512, 512)},
                           {"s9 32x256x256x64", codegen::dense_gemm_shape(32, 256, 256, 64)}};
  std::vector<codegen::GemmSchedule> extra;
  if (const char* e = std::getenv("GEMM_SCHED")) {
    codegen::GemmSchedule s;
    std::sscanf(e, "%d %d %ld %ld %ld", &s.mr, &s.nr, &s.kc, &s.mc, &s.nc);
    s.threads = threads;
    extra.push_back(s);
  }
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1, 1);
  for (const Run& r : runs) {
    std::vector<codegen::GemmSchedule> scheds = {codegen::default_gemm_schedule(r.g, t)};
    scheds[0].threads = threads;
    scheds.insert(scheds.end(), extra.begin(), extra.end());
    for (const auto& s : scheds) {
      std::string why = codegen::gemm_why_illegal(r.g, s, t);
      if (!why.empty()) { std::printf("%s: illegal: %s\n", r.name, why.c_str()); continue; }
      std::string name = "g" + std::to_string(r.g.batch) + "_" + std::to_string(r.g.M) + "_" + std::to_string(s.mr) +
                         "_" + std::to_string(s.nr) + "_" + std::to_string(s.kc) + "_" + std::to_string(s.mc);
      std::string src = codegen::emit_gemm_function(r.g, s, t, "bench_gemm") +
                        "extern \"C\" void entry(const float* A, const float* B, float* C) { bench_gemm(A, B, C); }\n";
      auto fn = reinterpret_cast<void (*)(const float*, const float*, float*)>(dlsym(build(src, name), "entry"));
      std::vector<float> A(r.g.batch * r.g.M * r.g.K), B(r.g.batch * r.g.K * r.g.N), C(r.g.batch * r.g.M * r.g.N);
      for (float& x : A) x = d(rng);
      for (float& x : B) x = d(rng);
      fn(A.data(), B.data(), C.data());
      std::vector<double> ts;
      for (int i = 0; i < reps; ++i) {
        double t0 = now();
        fn(A.data(), B.data(), C.data());
        ts.push_back(now() - t0);
      }
      std::sort(ts.begin(), ts.end());
      double flops = 2.0 * r.g.batch * r.g.M * r.g.N * r.g.K;
      double med = ts[ts.size() / 2];
      char buf[256];
      std::snprintf(buf, sizeof buf, "%-18s mr %2d nr %2d kc %3ld mc %3ld nc %4ld: median %.3f ms, %.1f GFLOP/s (best %.1f)",
                    r.name, s.mr, s.nr, s.kc, s.mc, s.nc, med * 1e3, flops / med / 1e9, flops / ts[0] / 1e9);
      std::printf("%s\n", buf);
      std::fflush(stdout);
      lines.push_back({buf, flops / med / 1e9});
    }
  }
  double peak_after = peak();
  double p = std::max(peak_before, peak_after) / 1e9;
  std::printf("FMA peak again: %.1f GFLOP/s; fractions below use %.1f\n", peak_after / 1e9, p);
  for (const Line& l : lines) std::printf("%.0f%% of peak  %s\n", 100 * l.gflops / p, l.text.c_str());
}
