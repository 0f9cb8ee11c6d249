// The contraction code generator for the CPU (see gemm.h for the design).
#include "codegen/cpu/gemm.h"

#include <algorithm>
#include <sstream>

namespace axon::codegen {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

int lanes(const target::Target& t) {
  int bits = t.isa.vector_bits();
  return bits == 512 ? 16 : bits == 256 ? 8 : 1;
}
int vector_registers(const target::Target& t) { return t.isa.vector_bits() == 512 ? 32 : 16; }

int64_t cache_bytes(const target::Target& t, int level, int64_t fallback) {
  const target::Cache* c = t.cache(level);
  return c && c->bytes > 0 ? c->bytes : fallback;
}

// mc: a multiple of mr near `want` whose block count splits evenly over the threads.
int64_t balanced_mc(int64_t M, int mr, int threads, int64_t want) {
  int64_t per_thread = ceil_div(M, threads);
  int64_t blocks = std::max<int64_t>(1, ceil_div(per_thread, want));
  return std::max<int64_t>(mr, round_up(ceil_div(per_thread, blocks), mr));
}

// Whether the batches alone give every thread whole products.
bool batches_feed_threads(const GemmShape& g, const GemmSchedule& s) {
  return g.batch >= s.threads && (g.batch % s.threads == 0 || g.batch >= 4 * s.threads);
}

// Whether column blocks of nc cut N into whole blocks that split evenly over
// the threads.
bool blocks_split_evenly(int64_t N, int64_t nc, int threads) { return N % nc == 0 && (N / nc) % threads == 0; }

// Whether threads take whole column blocks by default: when the batches do
// not feed them and whole blocks (as lower_gemm takes them) split evenly
// over them. A column block per
// thread packs its own B and needs no barrier; ranges of rows share the
// packed B and meet twice per K slice (s1 1024^3 on two threads of the
// AVX2 Zen 3 host: 1.18x-1.30x, bench/gemm/README.md).
int split_n_default(const GemmShape& g, const GemmSchedule& s) {
  if (s.threads <= 1) return 0;
  return !batches_feed_threads(g, s) && g.c_n == 1 && blocks_split_evenly(g.N, s.nc, s.threads) ? 1 : 0;
}

// nc, or the widest multiple of nr below it that cuts N into whole blocks
// splitting evenly over the threads, when nc does not and one exists.
int64_t column_block_for_threads(const GemmShape& g, const GemmSchedule& s) {
  if (s.threads <= 1 || batches_feed_threads(g, s) || g.c_n != 1) return s.nc;
  if (blocks_split_evenly(g.N, s.nc, s.threads)) return s.nc;
  for (int64_t blocks = s.threads; g.N / blocks >= s.nr; blocks += s.threads)
    if (g.N % blocks == 0 && (g.N / blocks) % s.nr == 0 && g.N / blocks <= s.nc) return g.N / blocks;
  return s.nc;
}

}  // namespace

GemmShape dense_gemm_shape(int64_t batch, int64_t M, int64_t N, int64_t K) {
  GemmShape g;
  g.batch = batch, g.M = M, g.N = N, g.K = K;
  g.a_batch = M * K, g.a_m = K, g.a_k = 1;
  g.b_batch = K * N, g.b_k = N, g.b_n = 1;
  g.c_batch = M * N, g.c_m = N, g.c_n = 1;
  return g;
}

GemmSchedule default_gemm_schedule(const GemmShape& g, const target::Target& t) {
  GemmSchedule s;
  int w = lanes(t);
  if (w == 16) s.mr = 6, s.nr = 64;
  else if (w == 8) s.mr = 6, s.nr = 16;
  else s.mr = 4, s.nr = 4;
  s.threads = std::max(1, t.cores);
  // Tiny products do not pay for a parallel region.
  if (static_cast<double>(g.batch) * g.M * g.N * g.K < 2e6) s.threads = 1;
  s.kc = std::min<int64_t>(256, std::max<int64_t>(1, g.K));
  // With AVX-512's 6 x 64 tile, a deeper slice where L1 holds its B
  // micro-panel twice (48 KiB L1: 384 x 64 floats): C's tiles are read and
  // written once per slice, K / kc times (the AVX-512 Xeon host: m1, K =
  // 4096, 0.92 of the time at 384; bench/RESULTS.md).
  const int64_t l1 = cache_bytes(t, 1, 32 << 10);
  if (w == 16 && g.K > s.kc && 384 * s.nr * 4 <= 2 * l1 && 384 * s.mr * 4 <= l1 / 2)
    s.kc = std::min<int64_t>(384, g.K);
  // A with contiguous rows is read in place: its broadcasts need no panel
  // layout, and the packing pass costs a cold read that the FMAs do not
  // hide (1024^3 and 32 x 256x256x64 ran 1.09x and 1.10x without it,
  // bench/gemm/in_place.sh).
  s.pack_a = g.a_k != 1;
  s.mc = balanced_mc(g.M, s.mr, s.threads, 96);
  s.nc = std::min<int64_t>(round_up(std::max<int64_t>(1, g.N), s.nr), round_up(1024, s.nr));
  // The packed B block is streamed past every A panel from L2: within half
  // of it, beside the A panels and C tiles that pass through. A block of
  // all of L2 spills to L3, which two threads then share.
  while (s.nc * s.kc * 4 > cache_bytes(t, 2, 1 << 20) / 2 && s.nc > s.nr) s.nc -= s.nr;
  // Under a large L2 one block can hold all of N (1024 columns under 2 MiB),
  // which leaves the threads ranges of rows: then the widest whole blocks
  // that split evenly over the threads instead, as a smaller L2 gives them.
  s.nc = column_block_for_threads(g, s);
  s.split_n = split_n_default(g, s);
  return s;
}

std::vector<schedule::Knob> gemm_knobs(const GemmShape& g, const target::Target& t, const std::string& prefix) {
  GemmSchedule d = default_gemm_schedule(g, t);
  int w = lanes(t);
  auto with_first = [](int64_t first, std::vector<int64_t> rest) {
    std::vector<int64_t> v{first};
    for (int64_t x : rest)
      if (x != first) v.push_back(x);
    return v;
  };
  std::vector<int64_t> nrs;
  for (int v = 1; v <= 4; ++v) nrs.push_back(int64_t(v) * w);
  std::vector<schedule::Knob> k;
  k.push_back({prefix + "mr", with_first(d.mr, {1, 2, 4, 6, 8, 12, 14}), "rows of the register tile"});
  k.push_back({prefix + "nr", with_first(d.nr, nrs), "columns of the register tile"});
  k.push_back({prefix + "kc", with_first(d.kc, {64, 128, 192, 256, 384, 512}), "depth of a packed K slice"});
  k.push_back({prefix + "mc", with_first(d.mc, {48, 96, 144, 192, 384}),
               "rows of C per work item (rounded up to a multiple of mr)"});
  k.push_back({prefix + "nc", with_first(d.nc, {256, 512, 1024, 2048}),
               "columns of a packed B block (rounded up to a multiple of nr)"});
  std::vector<int64_t> th;
  for (int i = 1; i <= std::max(1, t.cores); i *= 2) th.push_back(i);
  if (th.back() != t.cores && t.cores > 1) th.push_back(t.cores);
  k.push_back({prefix + "threads", with_first(d.threads, th), "OpenMP threads"});
  k.push_back({prefix + "prefetch", {1, 0}, "software prefetch of the next A panel"});
  k.push_back({prefix + "pack_a", with_first(d.pack_a, {1, 0}), "1: pack A into panels; 0: read A in place"});
  k.push_back({prefix + "pack_b", with_first(d.pack_b, {1, 0}), "1: pack B into panels; 0: read B in place"});
  k.push_back({prefix + "split_n", with_first(d.split_n, {0, 1}),
               "on threads: 1 whole column blocks per thread (each packs its own B, no barrier); 0 ranges of rows"});
  return k;
}

GemmSchedule gemm_schedule_from(const schedule::Schedule& s, const std::string& prefix) {
  GemmSchedule r;
  auto get = [&](const char* name, auto& field) {
    auto it = s.find(prefix + name);
    if (it != s.end()) field = static_cast<std::remove_reference_t<decltype(field)>>(it->second);
  };
  get("mr", r.mr), get("nr", r.nr), get("kc", r.kc), get("mc", r.mc), get("nc", r.nc);
  get("threads", r.threads), get("prefetch", r.prefetch), get("pack_a", r.pack_a), get("pack_b", r.pack_b);
  get("split_n", r.split_n);
  // mc and nc are sizes to aim for: rounded up to whole register tiles here,
  // so that every mr and nr can meet every mc and nc of the space.
  if (r.mr > 0 && r.mc > 0) r.mc = round_up(r.mc, r.mr);
  if (r.nr > 0 && r.nc > 0) r.nc = round_up(r.nc, r.nr);
  return r;
}

std::string gemm_why_illegal(const GemmShape& g, const GemmSchedule& s, const target::Target& t) {
  std::ostringstream os;
  int w = lanes(t);
  if (g.batch < 1 || g.M < 1 || g.N < 1 || g.K < 0) return "gemm: batch, M, N must be >= 1 and K >= 0";
  if (g.batch > 1 && g.c_batch == 0) return "gemm: c_batch is 0 with batch > 1 (batches would race on C)";
  if (s.mr < 1 || s.nr < 1 || s.kc < 1 || s.mc < 1 || s.nc < 1 || s.threads < 1) return "gemm: non-positive tile size";
  if (s.nr % w != 0) {
    os << "gemm: nr = " << s.nr << " is not a multiple of the vector width " << w;
    return os.str();
  }
  int nv = s.nr / w;
  int regs = s.mr * nv + nv + 1;
  if (w == 1 && s.mr * s.nr > 64) return "gemm: scalar tiles are limited to 64 accumulators";
  if (w > 1 && regs > vector_registers(t)) {
    os << "gemm: " << s.mr << "x" << nv << " accumulators + operands need " << regs << " vector registers, "
       << vector_registers(t) << " exist";
    return os.str();
  }
  if (!s.pack_b && g.b_n != 1) return "gemm: B read in place needs contiguous rows of B (b_n = 1)";
  if (!s.pack_b && g.N % s.nr != 0) {
    os << "gemm: B read in place needs whole panels, and N = " << g.N << " is not a multiple of nr = " << s.nr;
    return os.str();
  }
  if (s.split_n != 0 && s.split_n != 1) return "gemm: split_n is 0 (ranges of rows) or 1 (column blocks)";
  if (s.mc % s.mr != 0) return "gemm: mc is not a multiple of mr";
  if (s.nc % s.nr != 0) return "gemm: nc is not a multiple of nr";
  int64_t l1 = cache_bytes(t, 1, 32 << 10), l2 = cache_bytes(t, 2, 1 << 20);
  // The A micro-panel stays in L1 while the B panels stream past it from L2.
  if (s.kc * s.mr * 4 > l1 / 2) {
    os << "gemm: the A micro-panel mr*kc (" << s.kc * s.mr * 4 << " bytes) exceeds half of L1";
    return os.str();
  }
  if (s.kc * s.nr * 4 > l1 * 2) return "gemm: a B micro-panel kc*nr exceeds twice L1";
  if (s.mc * s.kc * 4 > l2 / 2) return "gemm: packed A block mc*kc exceeds half of L2";
  if (s.nc * s.kc * 4 > l2) return "gemm: packed B block kc*nc exceeds L2";
  if (s.threads > std::max(1, t.threads)) return "gemm: more threads than the target has";
  return "";
}

double gemm_predicted_seconds(const GemmShape& g, const GemmSchedule& s, const target::Target& t) {
  int w = lanes(t);
  double lane_peak = t.peaks.fma_gflops_all > 0 ? t.peaks.fma_gflops_all / std::max(1, t.cores)
                                                : 2.0 * 3.0 * (w == 1 ? 2 : w);  // GFLOP/s per core, guessed
  double peak = lane_peak * std::min(s.threads, std::max(1, t.cores)) * 1e9;
  // Padded work of the edge tiles, and the loads + broadcasts per FMA of the tile.
  double padded = double(round_up(g.M, s.mr)) * round_up(g.N, s.nr) / (double(g.M) * g.N);
  int nv = s.nr / w;
  double fma = double(s.mr) * nv, ops = s.mr + nv;
  double eff = std::min(1.0, fma / (fma + 0.5 * ops)) * std::min(1.0, double(std::min(g.K, s.kc)) / 64.0 + 0.5);
  // How evenly the work items (batches, column blocks or row blocks) fall on
  // the threads; ranges of rows meet at two barriers per K slice of each
  // column block (a few microseconds each in the model, more on a loaded
  // host, where each waits for the slowest thread).
  const bool batches = s.threads > 1 && batches_feed_threads(g, s);
  const bool cols = s.threads > 1 && !batches && s.split_n == 1 && g.c_n == 1 && g.N % s.nc == 0;
  double blocks = double(batches ? g.batch : cols ? ceil_div(g.N, s.nc) : ceil_div(g.M, s.mc));
  double balance = ceil_div(int64_t(blocks), s.threads) * s.threads / blocks;
  double barriers = s.threads > 1 && !batches && !cols ? 2.0 * g.batch * ceil_div(g.N, s.nc) * ceil_div(g.K, s.kc) : 0.0;
  double flops = 2.0 * g.batch * g.M * g.N * std::max<int64_t>(g.K, 1);
  double compute = flops * padded * balance / (peak * std::max(0.05, eff));
  double bw = (t.peaks.stream_gbs_all > 0 ? t.peaks.stream_gbs_all : 20.0) * 1e9;
  // B read in place along rows a multiple of 4 KiB apart keeps its block in
  // a few cache sets (1024^3: 12-25% slower than packed, in_place.sh), and
  // A read in place down its columns (a_k > 1) loads a new line per k;
  // otherwise reading in place only saves the packing pass.
  if (!s.pack_b && g.b_k > 1 && (g.b_k * 4) % 4096 == 0) compute *= 1.25;
  if (!s.pack_a && g.a_k != 1) compute *= 1.25;
  double a_bytes = g.M * g.K * double(ceil_div(g.N, s.nc)) * (s.pack_a ? 2.0 : 1.0);
  double b_bytes = g.K * g.N * (s.pack_b ? 2.0 : 1.0);
  double bytes = 4.0 * g.batch * (a_bytes + b_bytes + g.M * g.N * 2.0 * ceil_div(g.K, s.kc));
  return compute + bytes / bw + (s.threads > 1 ? 5e-6 : 0.0) + barriers * 3e-6;
}

}  // namespace axon::codegen
