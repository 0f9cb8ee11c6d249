// The GEMM code generator: emitted kernels compiled, run, and compared with a
// float64 reference for odd shapes, strides, broadcast batches, accumulation,
// AVX-512, AVX2 and scalar targets, and the smallest and largest tiles.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "codegen/cpu/gemm.h"
#include "runtime/compile_shared.h"
#include "runtime/loaded_kernel.h"

namespace axon {
namespace {

using codegen::GemmSchedule;
using codegen::GemmShape;

target::Target machine(int bits) {
  target::Target t;
  t.name = "gemm-test";
  t.cores = 2, t.threads = 2;
  t.caches = {{1, 32 << 10, 64, 1}, {2, 1 << 20, 64, 1}, {3, 32 << 20, 64, 2}};
  if (bits >= 256) t.isa.avx2 = t.isa.fma = true;
  if (bits == 512) t.isa.avx512f = t.isa.avx512bw = t.isa.avx512vl = t.isa.avx512dq = true;
  return t;
}

bool host_has(int bits) {
  __builtin_cpu_init();
  if (bits == 512)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  if (bits == 256) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return true;
}

std::vector<std::string> flags_for(int bits) {
  std::vector<std::string> f = {"-O2", "-ffp-contract=off", "-fPIC", "-shared", "-fopenmp"};
  if (bits >= 256) f.insert(f.end(), {"-mavx2", "-mfma"});
  if (bits == 512) f.insert(f.end(), {"-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq"});
  return f;
}

struct Case {
  GemmShape g;
  GemmSchedule s;
  std::string what;
};

// Dense row-major, with optional transposition of A or B, padded leading
// dimensions and broadcast (batch stride 0) of A or B.
GemmShape shape(int64_t batch, int64_t M, int64_t N, int64_t K, bool ta = false, bool tb = false, int64_t pad = 0,
                bool bcast_a = false, bool bcast_b = false) {
  GemmShape g;
  g.batch = batch, g.M = M, g.N = N, g.K = K;
  if (ta) g.a_k = M + pad, g.a_m = 1; else g.a_m = K + pad, g.a_k = 1;
  if (tb) g.b_n = K + pad, g.b_k = 1; else g.b_k = N + pad, g.b_n = 1;
  g.c_m = N + pad, g.c_n = 1;
  g.a_batch = bcast_a ? 0 : (ta ? K * (M + pad) : M * (K + pad));
  g.b_batch = bcast_b ? 0 : (tb ? N * (K + pad) : K * (N + pad));
  g.c_batch = M * (N + pad);
  return g;
}

GemmSchedule sched(int mr, int nr, int64_t kc, int64_t mc, int64_t nc, int threads) {
  GemmSchedule s;
  s.mr = mr, s.nr = nr, s.kc = kc, s.mc = mc, s.nc = nc, s.threads = threads;
  return s;
}

int64_t extent(int64_t batch, int64_t bs, int64_t d0, int64_t s0, int64_t d1, int64_t s1) {
  return (batch - 1) * bs + (d0 - 1) * s0 + (d1 - 1) * s1 + 1;
}

// Emits every case into one library, runs each and returns the failures.
void check(const std::vector<Case>& cases, int bits) {
  if (!host_has(bits)) GTEST_SKIP() << "host lacks the " << bits << "-bit ISA";
  // A kernel library that links libgomp would unload it on dlclose while its
  // worker threads still run; keep one copy resident for the whole process.
  static void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
  (void)gomp;
  target::Target t = machine(bits);
  codegen::KernelSource k;
  k.entry = "gemm_case_0";
  std::ostringstream hdr, src;
  src << "#include \"kernel.h\"\n";
  for (size_t i = 0; i < cases.size(); ++i) {
    ASSERT_EQ(codegen::gemm_why_illegal(cases[i].g, cases[i].s, t), "") << cases[i].what;
    std::string fn = "gemm_k" + std::to_string(i);
    src << codegen::emit_gemm_function(cases[i].g, cases[i].s, t, fn);
    src << "extern \"C\" void gemm_case_" << i << "(const float* A, const float* B, float* C) { " << fn
        << "(A, B, C); }\n";
    hdr << "void gemm_case_" << i << "(const float* A, const float* B, float* C);\n";
  }
  k.header = "#ifdef __cplusplus\nextern \"C\" {\n#endif\n" + hdr.str() + "#ifdef __cplusplus\n}\n#endif\n";
  k.source = src.str();
  runtime::CompileOptions opts;
  opts.flags = flags_for(bits);
  std::string so = runtime::compile_shared(k, opts);
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (size_t i = 0; i < cases.size(); ++i) {
    const GemmShape& g = cases[i].g;
    runtime::LoadedKernel kern(so, "gemm_case_" + std::to_string(i));
    std::vector<float> A(extent(g.batch, g.a_batch, g.M, g.a_m, g.K, g.a_k) + 1);
    std::vector<float> B(extent(g.batch, g.b_batch, g.K, g.b_k, g.N, g.b_n) + 1);
    std::vector<float> C(extent(g.batch, g.c_batch, g.M, g.c_m, g.N, g.c_n) + 16);
    for (float& x : A) x = dist(rng);
    for (float& x : B) x = dist(rng);
    for (float& x : C) x = dist(rng);
    std::vector<float> C0 = C;
    std::vector<char> written(C.size(), 0);
    kern.call({A.data(), B.data(), C.data()});
    int bad = 0;
    for (int64_t b = 0; b < g.batch; ++b)
      for (int64_t m = 0; m < g.M; ++m)
        for (int64_t n = 0; n < g.N; ++n) {
          double ref = 0, mag = 0;
          for (int64_t kk = 0; kk < g.K; ++kk) {
            double p = double(A[b * g.a_batch + m * g.a_m + kk * g.a_k]) * B[b * g.b_batch + kk * g.b_k + n * g.b_n];
            ref += p, mag += std::fabs(p);
          }
          int64_t ci = b * g.c_batch + m * g.c_m + n * g.c_n;
          written[ci] = 1;
          double bound = (double(g.K) + 2) * std::ldexp(1.0, -23) * mag + 1e-30;
          if (!(std::fabs(C[ci] - ref) <= bound) && bad++ < 5)
            ADD_FAILURE() << cases[i].what << ": C[" << b << "][" << m << "][" << n << "] = " << C[ci]
                          << ", reference " << ref << ", bound " << bound;
        }
    for (size_t j = 0; j < C.size(); ++j)
      if (!written[j] && C[j] != C0[j] && bad++ < 5)
        ADD_FAILURE() << cases[i].what << ": wrote outside C at element " << j;
    EXPECT_EQ(bad, 0) << cases[i].what;
  }
}

std::vector<Case> odd_shapes(int W, int threads) {
  std::vector<Case> c;
  int mr_big = W == 16 ? 14 : W == 8 ? 6 : 4, nr_big = W == 16 ? 2 * W : W == 8 ? 2 * W : 4;
  for (auto [M, N, K] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {7, 7, 7}, {33, 33, 33}, {1, 65, 300}, {50, 3, 513}}) {
    c.push_back({shape(1, M, N, K), sched(mr_big, nr_big, 64, mr_big * 2, nr_big * 2, threads), "odd dense"});
    c.push_back({shape(1, M, N, K), sched(1, W, 16, 1, W, threads), "smallest tile"});
  }
  return c;
}

TEST(gemm, Avx512OddShapesAndTiles) {
  auto c = odd_shapes(16, 2);
  // the largest tiles: 14 x 2 zmm, 6 x 4 zmm, 8 x 3 zmm
  c.push_back({shape(1, 37, 131, 70), sched(14, 32, 128, 56, 64, 2), "14x32"});
  c.push_back({shape(1, 37, 131, 70), sched(6, 64, 96, 36, 128, 2), "6x64"});
  c.push_back({shape(1, 64, 96, 64), sched(8, 48, 64, 16, 96, 1), "8x48 exact"});
  check(c, 512);
}

TEST(gemm, Avx512StridesBatchBroadcastAccumulate) {
  std::vector<Case> c;
  GemmSchedule s = sched(8, 48, 32, 16, 96, 2);
  c.push_back({shape(1, 29, 53, 41, true, false), s, "A transposed"});
  c.push_back({shape(1, 29, 53, 41, false, true), s, "B transposed"});
  c.push_back({shape(1, 29, 53, 41, true, true, 5), s, "both transposed, padded"});
  c.push_back({shape(3, 17, 19, 23, false, false, 3, true, false), s, "batch, A broadcast"});
  c.push_back({shape(3, 17, 19, 23, false, false, 0, false, true), s, "batch, B broadcast"});
  c.push_back({shape(2, 17, 50, 100), s, "K split"});
  c.push_back({shape(4, 13, 70, 37, false, true, 1, false, true), s, "batch per thread, B broadcast"});
  c.push_back({shape(1, 9, 9, 0), s, "K = 0"});
  GemmShape strided_c = shape(1, 20, 30, 10);
  strided_c.c_m = 1, strided_c.c_n = 20;  // C written transposed
  c.push_back({strided_c, s, "C transposed"});
  check(c, 512);
}

GemmSchedule in_place(GemmSchedule s, bool pack_a, bool pack_b) {
  s.pack_a = pack_a, s.pack_b = pack_b;
  return s;
}

// Operands read in place: edges of M (A's edge panel is packed), whole B
// panels only, transposed and padded A, broadcast batches, K split into
// slices (beta), accumulation, one thread per batch.
std::vector<Case> in_place_cases(int W) {
  std::vector<Case> c;
  int mr = W == 16 ? 6 : W == 8 ? 4 : 3, nr = W == 1 ? 4 : 2 * W;
  GemmSchedule s = sched(mr, nr, 32, 2 * mr, 2 * nr, 2);
  for (auto [pa, pb] : std::vector<std::pair<bool, bool>>{{false, true}, {true, false}, {false, false}}) {
    std::string what = std::string(pa ? "A packed" : "A in place") + ", " + (pb ? "B packed" : "B in place");
    GemmSchedule t = in_place(s, pa, pb);
    c.push_back({shape(1, 3 * mr + 1, 3 * nr, 70), t, what + ", M edge, K split"});
    c.push_back({shape(1, 2 * mr, 2 * nr, 9), t, what + ", exact"});
    c.push_back({shape(1, 2 * mr + 3, nr, 40, true, false, 5), t, what + ", A transposed and padded"});
    c.push_back({shape(4, mr + 2, 2 * nr, 33, false, false, 3, true, false), t, what + ", batch per thread, A broadcast"});
    c.push_back({shape(3, 2 * mr - 1, nr, 20, false, false, 0, false, true), t, what + ", batch, B broadcast"});
    c.push_back({shape(1, mr - 1, nr, 5), t, what + ", M below one panel"});
  }
  return c;
}

TEST(gemm, Avx512OperandsInPlace) { check(in_place_cases(16), 512); }
TEST(gemm, Avx2OperandsInPlace) { check(in_place_cases(8), 256); }
TEST(gemm, ScalarOperandsInPlace) { check(in_place_cases(1), 0); }

// A in place needs its one-panel scratch only for a panel cut by the edge of M.
TEST(gemm, InPlaceAScratchOnlyAtAnEdgeOfM) {
  target::Target t = machine(512);
  auto has_scratch = [&](int64_t M, bool pack_a, int threads) {
    GemmSchedule s = in_place(sched(6, 32, 32, 12, 64, threads), pack_a, true);
    tile::Kernel k = tile::lower_gemm(shape(1, M, 64, 9), s);
    return std::any_of(k.buffers.begin(), k.buffers.end(), [](const tile::Buffer& b) { return b.name == "Apack"; });
  };
  for (int threads : {1, 2}) {
    EXPECT_FALSE(has_scratch(24, false, threads)) << threads;
    EXPECT_TRUE(has_scratch(25, false, threads)) << threads;
    EXPECT_TRUE(has_scratch(24, true, threads)) << threads;
  }
}

// Threads on whole column blocks (split_n 1): each packs its own B panels
// (or reads B in place) and covers every row, the panel an edge of M cuts
// included; odd column counts leave a thread a short block or none.
std::vector<Case> column_block_cases(int W) {
  std::vector<Case> c;
  int mr = W == 16 ? 6 : W == 8 ? 4 : 3, nr = W == 1 ? 4 : 2 * W;
  GemmSchedule s = sched(mr, nr, 32, 2 * mr, 2 * nr, 2);
  s.split_n = 1;
  for (auto [pa, pb] : std::vector<std::pair<bool, bool>>{{false, true}, {true, true}, {false, false}}) {
    std::string what = std::string(pa ? "A packed" : "A in place") + ", " + (pb ? "B packed" : "B in place");
    GemmSchedule t = in_place(s, pa, pb);
    c.push_back({shape(1, 3 * mr + 1, 4 * nr, 70), t, what + ", two blocks each, M edge, K split"});
    c.push_back({shape(1, 2 * mr, 2 * nr, 9), t, what + ", one block"});
    c.push_back({shape(1, 2 * mr + 3, 6 * nr, 40, true, false, 5), t, what + ", three blocks, A transposed and padded"});
    c.push_back({shape(1, mr - 1, 4 * nr, 5), t, what + ", M below one panel"});
  }
  c.push_back({shape(1, 3 * mr + 1, 5 * nr + 3, 70), s, "N edge in the last block"});
  c.push_back({shape(1, 13, 2 * nr + 1, 33, false, true, 2), s, "B transposed and padded"});
  c.push_back({shape(1, 9, 9, 0), s, "K = 0"});
  GemmShape strided_c = shape(1, 20, 6 * nr, 10);
  strided_c.c_m = 1, strided_c.c_n = 20;  // C written transposed
  c.push_back({strided_c, s, "C transposed"});
  c.push_back({shape(3, 2 * mr - 1, 4 * nr, 20, false, false, 0, false, true), s, "batches, B broadcast (on threads)"});
  return c;
}

TEST(gemm, Avx512ThreadsOnColumnBlocks) { check(column_block_cases(16), 512); }
TEST(gemm, Avx2ThreadsOnColumnBlocks) { check(column_block_cases(8), 256); }
TEST(gemm, ScalarThreadsOnColumnBlocks) { check(column_block_cases(1), 0); }

TEST(gemm, Avx2) {
  auto c = odd_shapes(8, 2);
  c.push_back({shape(3, 29, 53, 41, true, true, 2, true, false), sched(6, 16, 32, 12, 32, 1), "avx2 mixed"});
  c.push_back({shape(1, 30, 70, 40), sched(4, 24, 32, 8, 48, 2), "avx2 4x24"});
  check(c, 256);
}

TEST(gemm, Scalar) {
  auto c = odd_shapes(1, 1);
  c.push_back({shape(2, 13, 11, 9, true, false, 1, false, true), sched(3, 5, 4, 6, 10, 2), "scalar mixed"});
  check(c, 0);
}

TEST(gemm, LegalityAndKnobs) {
  target::Target t = machine(512);
  GemmShape g = codegen::dense_gemm_shape(1, 1024, 1024, 1024);
  EXPECT_NE(codegen::gemm_why_illegal(g, sched(16, 64, 256, 96, 1024, 1), t), "");  // 68 zmm
  EXPECT_NE(codegen::gemm_why_illegal(g, sched(8, 40, 256, 96, 1040, 1), t), "");   // nr not a multiple of 16
  EXPECT_NE(codegen::gemm_why_illegal(g, sched(8, 48, 1024, 96, 960, 1), t), "");   // kc too deep for L1
  EXPECT_NE(codegen::gemm_why_illegal(g, sched(8, 48, 256, 100, 960, 1), t), "");   // mc not a multiple of mr
  EXPECT_NE(codegen::gemm_why_illegal(g, sched(8, 32, 64, 16, 32, 1), machine(256)), "");  // 16+4+1 > 16 ymm
  // B in place: contiguous rows and whole panels only; A in place: any strides
  EXPECT_NE(codegen::gemm_why_illegal(g, in_place(sched(6, 48, 256, 96, 960, 1), true, false), t), "");  // 1024 % 48
  EXPECT_EQ(codegen::gemm_why_illegal(g, in_place(sched(6, 64, 256, 96, 1024, 1), true, false), t), "");
  EXPECT_NE(codegen::gemm_why_illegal(shape(1, 64, 64, 64, false, true), in_place(sched(6, 64, 64, 96, 64, 1), true, false), t),
            "");  // B transposed: b_n != 1
  EXPECT_EQ(codegen::gemm_why_illegal(shape(1, 61, 64, 64, true, false), in_place(sched(6, 64, 64, 96, 64, 1), false, true), t),
            "");
  auto knobs = codegen::gemm_knobs(g, t, "k0.");
  schedule::Schedule s;
  for (const auto& k : knobs) s[k.name] = k.values[0];
  GemmSchedule d = codegen::gemm_schedule_from(s, "k0.");
  EXPECT_EQ(codegen::gemm_why_illegal(g, d, t), "");
  EXPECT_TRUE(!d.pack_a && d.pack_b);  // A with contiguous rows is read in place by default
  EXPECT_TRUE(codegen::default_gemm_schedule(shape(1, 64, 64, 64, true, false), t).pack_a);  // A transposed: packed
  // B in place with rows 4 KiB apart loses to packed B in the model (as measured)
  EXPECT_GT(codegen::gemm_predicted_seconds(g, in_place(sched(6, 64, 256, 96, 1024, 2), false, false), t),
            codegen::gemm_predicted_seconds(g, in_place(sched(6, 64, 256, 96, 1024, 2), false, true), t));
  s["k0.pack_a"] = 0, s["k0.pack_b"] = 0;
  EXPECT_FALSE(codegen::gemm_schedule_from(s, "k0.").pack_a);
  EXPECT_FALSE(codegen::gemm_schedule_from(s, "k0.").pack_b);
  // With K = 64 the packing pass is a large share: the model prefers A and B in place
  GemmShape s9 = codegen::dense_gemm_shape(32, 256, 256, 64);
  EXPECT_LT(codegen::gemm_predicted_seconds(s9, in_place(sched(6, 32, 64, 192, 256, 2), false, false), t),
            codegen::gemm_predicted_seconds(s9, sched(6, 32, 64, 192, 256, 2), t));
  EXPECT_GT(codegen::gemm_predicted_seconds(g, d, t), 0);
  // the default beats a 1x16 tile in the model
  EXPECT_LT(codegen::gemm_predicted_seconds(g, d, t), codegen::gemm_predicted_seconds(g, sched(1, 16, 256, 96, 1024, 2), t));
  // Two threads on s1 with the L2 of the AVX2 Zen 3 host (512 KiB): the
  // packed B block within half of L2 (kc 256 x nc 256), four column blocks,
  // whole blocks on the threads by default, which the model ranks ahead of
  // ranges of rows. Where L2 would hold all of N in one block (nc 1024
  // under a 4 MiB L2), the widest blocks that split evenly over the
  // threads instead (two of 512). Blocks that cannot split evenly, one
  // thread, or batches that feed the threads: ranges of rows (split_n 0;
  // unused without threads).
  target::Target zen3 = machine(256);
  zen3.caches[1].bytes = 512 << 10;
  GemmSchedule s1 = codegen::default_gemm_schedule(g, zen3);
  EXPECT_EQ(s1.nc, 256);
  EXPECT_LE(s1.nc * s1.kc * 4, 256 << 10);
  EXPECT_EQ(s1.split_n, 1);
  EXPECT_EQ(codegen::gemm_why_illegal(g, s1, zen3), "");
  GemmSchedule rows = s1;
  rows.split_n = 0;
  EXPECT_LT(codegen::gemm_predicted_seconds(g, s1, zen3), codegen::gemm_predicted_seconds(g, rows, zen3));
  rows.split_n = 2;
  EXPECT_NE(codegen::gemm_why_illegal(g, rows, zen3), "");
  target::Target big_l2 = machine(256);
  big_l2.caches[1].bytes = 4 << 20;
  EXPECT_EQ(codegen::default_gemm_schedule(g, big_l2).nc, 512);
  EXPECT_EQ(codegen::default_gemm_schedule(g, big_l2).split_n, 1);
  // N = 768 under 4 MiB: two blocks of 384 (a multiple of nr = 16)
  EXPECT_EQ(codegen::default_gemm_schedule(codegen::dense_gemm_shape(1, 1024, 768, 1024), big_l2).nc, 384);
  // one thread keeps its one block; batches that feed the threads keep theirs
  target::Target big_l2_one = big_l2;
  big_l2_one.cores = 1;
  EXPECT_EQ(codegen::default_gemm_schedule(g, big_l2_one).nc, 1024);
  EXPECT_EQ(codegen::default_gemm_schedule(codegen::dense_gemm_shape(8, 512, 1024, 512), big_l2).nc, 1024);
  EXPECT_EQ(codegen::default_gemm_schedule(g, machine(256)).nc, 512);  // 1 MiB L2: two blocks
  EXPECT_EQ(codegen::default_gemm_schedule(s9, zen3).split_n, 0);
  EXPECT_EQ(codegen::default_gemm_schedule(codegen::dense_gemm_shape(1, 7, 12, 3), zen3).split_n, 0);
  EXPECT_EQ(codegen::default_gemm_schedule(codegen::dense_gemm_shape(1, 512, 1500, 256), zen3).split_n, 0);
  s["k0.split_n"] = 1;
  EXPECT_EQ(codegen::gemm_schedule_from(s, "k0.").split_n, 1);
  for (int bits : {0, 256, 512})
    for (auto dims : std::vector<std::array<int64_t, 4>>{{1, 1, 1, 1}, {8, 512, 512, 512}, {1, 7, 1000, 3}}) {
      GemmShape gg = codegen::dense_gemm_shape(dims[0], dims[1], dims[2], dims[3]);
      EXPECT_EQ(codegen::gemm_why_illegal(gg, codegen::default_gemm_schedule(gg, machine(bits)), machine(bits)), "")
          << bits;
    }
}

}  // namespace
}  // namespace axon
