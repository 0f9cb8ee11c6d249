#include "codegen/cpu/attention.h"

#include <algorithm>

#include "codegen/c_like/tile_cpp.h"
#include "codegen/cpu/stage_knobs.h"
#include "support/diagnostic.h"
#include "tile/inline_value.h"
#include "tile/row_function.h"
#include "tile/verify.h"

namespace axon::codegen {

namespace {

int lanes(const target::Target& t) {
  const int bits = t.isa.vector_bits();
  return bits >= 512 ? 16 : bits >= 256 ? 8 : 1;
}

// The ISA's register tile for both products.
void register_tile(const target::Target& t, int* mr, int* nr) {
  const int w = lanes(t);
  *mr = 4;
  *nr = w == 16 ? 64 : w == 8 ? 16 : 4;
}

int64_t cache_bytes(const target::Target& t, int level, int64_t fallback) {
  const target::Cache* c = t.cache(level);
  return c && c->bytes > 0 ? c->bytes : fallback;
}

std::vector<int64_t> dividing(const std::vector<int64_t>& candidates, int64_t total, int64_t multiple_of) {
  std::vector<int64_t> out;
  for (int64_t c : candidates)
    if (c <= total && total % c == 0 && c % multiple_of == 0) out.push_back(c);
  return out;
}

}  // namespace

tile::AttentionShape attention_shape_of(const loop::AttentionGroup& a) {
  const loop::Contraction &qk = a.qk, &pv = a.pv;
  tile::AttentionShape s;
  s.batch = qk.batch, s.M = qk.M, s.N = qk.N, s.D = qk.K, s.Dv = pv.N;
  s.q_batch = qk.a_batch, s.q_m = qk.a_m, s.q_k = qk.a_k;
  s.k_batch = qk.b_batch, s.k_n = qk.b_n, s.k_k = qk.b_k;
  s.v_batch = pv.b_batch, s.v_k = pv.b_k, s.v_n = pv.b_n;
  s.o_batch = pv.c_batch, s.o_m = pv.c_m, s.o_n = pv.c_n;
  if (a.has_qk2) {
    const loop::Contraction& q2 = a.qk2;
    s.D2 = q2.K;
    s.q2_batch = q2.a_batch, s.q2_m = q2.a_m, s.q2_k = q2.a_k;
    s.k2_batch = q2.b_batch, s.k2_n = q2.b_n, s.k2_k = q2.b_k;
  }
  return s;
}

std::vector<schedule::Knob> attention_knobs(const loop::AttentionGroup& a, const target::Target& t,
                                            const std::string& p) {
  int mr = 0, nr = 0;
  register_tile(t, &mr, &nr);
  const tile::AttentionShape s = attention_shape_of(a);
  std::vector<schedule::Knob> k;
  k.push_back({p + "bq", dividing({64, 32, 128, 16, 256, 8, 4}, s.M, mr), "query rows per block"});
  // A block of every key would hold whole score rows (no online softmax):
  // only where there is no smaller block.
  std::vector<int64_t> bk = dividing({64, 128, 256, 512}, s.N, nr);
  if (bk.size() > 1) bk.erase(std::remove(bk.begin(), bk.end(), s.N), bk.end());
  k.push_back({p + "bk", bk, "key rows per block"});
  std::vector<int64_t> threads;
  for (int64_t n = std::max(1, t.cores); n >= 1; n = n > 1 ? n / 2 : 0) threads.push_back(n);
  k.push_back({p + "threads", threads, "OpenMP threads over the batch (and the key ranges of attn.split)"});
  k.push_back({p + "kt", s.M >= 32 ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0, 1},
               "1: K^T packed and the scores register-tiled; 0: dot products"});
  // Split-KV: key ranges per batch. With fewer batches than cores (decode)
  // splitting first; any count is legal (tile/lower_attention.h).
  std::vector<int64_t> splits;
  for (int64_t n : {1, 2, 3, 4, 6, 8, 16, 32})
    if (n == 1 || n <= s.N / 64) splits.push_back(n);
  if (s.batch < std::max(1, t.cores) && splits.size() > 1) std::swap(splits[0], splits[1]);
  k.push_back({p + "split", splits, "key ranges per batch, each with its own max, sum and partial output, then combined"});
  return k;
}

tile::AttentionSchedule attention_schedule_from(const loop::AttentionGroup& a, const schedule::Schedule& sched,
                                                const target::Target& t, const std::string& p) {
  tile::AttentionSchedule s;
  register_tile(t, &s.mr, &s.nr);
  // K^T packed by the printer's in-register transposes.
  s.pack_tile = lanes(t) == 16 ? 16 : lanes(t) == 8 ? 8 : 0;
  for (const schedule::Knob& k : attention_knobs(a, t, p)) {
    auto it = sched.find(k.name);
    const int64_t v = it != sched.end() ? it->second : (k.values.empty() ? 0 : k.values[0]);
    const std::string name = k.name.substr(p.size());
    if (name == "bq") s.bq = v;
    if (name == "bk") s.bk = v;
    if (name == "threads") s.threads = static_cast<int>(v);
    if (name == "kt") s.transpose_k = v != 0;
    if (name == "split") s.splits = static_cast<int>(v);
  }
  return s;
}

std::string attention_why_illegal(const loop::AttentionGroup& a, const tile::AttentionSchedule& s) {
  const tile::AttentionShape sh = attention_shape_of(a);
  if (s.bq <= 0 || sh.M % s.bq != 0 || s.bq % s.mr != 0)
    return "attn.bq = " + std::to_string(s.bq) + " must divide M = " + std::to_string(sh.M) + " in whole register tiles";
  if (s.bk <= 0 || sh.N % s.bk != 0 || s.bk % s.nr != 0)
    return "attn.bk = " + std::to_string(s.bk) + " must divide N = " + std::to_string(sh.N) + " in whole register tiles";
  if (sh.Dv % s.nr != 0) return "the value width " + std::to_string(sh.Dv) + " is not a whole number of register tiles";
  if (s.threads < 1) return "attn.threads must be at least 1";
  if (s.splits < 1) return "attn.split must be at least 1";
  return "";
}

double attention_seconds(const loop::AttentionGroup& a, const tile::AttentionSchedule& s, const target::Target& t) {
  const tile::AttentionShape sh = attention_shape_of(a);
  const double lane_peak = t.peaks.fma_gflops_all > 0 ? t.peaks.fma_gflops_all / std::max(1, t.cores)
                                                      : (t.peaks.fma_gflops_1t > 0 ? t.peaks.fma_gflops_1t : 50);
  // The (batch, key range) pairs shared by the threads: a thread with one
  // more than another leaves its core idle for the difference.
  int64_t per = 0;
  const int64_t items = sh.batch * tile::key_ranges(sh.N / std::max<int64_t>(1, s.bk), s.splits, &per);
  const int64_t used = std::min<int64_t>(s.threads, std::max(1, t.cores));
  const double busy = static_cast<double>(items) / static_cast<double>((items + used - 1) / used * used);
  const double peak = lane_peak * static_cast<double>(used) * busy * 1e9;
  const double flops = 2.0 * sh.batch * sh.M * sh.N * (sh.D + sh.D2 + sh.Dv);
  // Two passes of exp and arithmetic over every score, about 16 flops each.
  const double softmax = 16.0 * sh.batch * sh.M * sh.N;
  // What one key step of a query block touches: the scores (S, S2), the
  // output tile, the query rows and the key block's K^T and V. Past L1 the
  // products' operands come from L2, past L2 from L3: on the AVX2 Zen 3
  // host (512 KiB L2) bq = bk = 256 (512 KiB) took 1.20-1.25x the time of
  // bq = bk = 64 (80 KiB) on one thread, bk = 128 (128 KiB) 1.05-1.09x.
  const double l2 = static_cast<double>(cache_bytes(t, 2, 1 << 20));
  const double step_bytes = 4.0 * static_cast<double>(s.bq * s.bk * (sh.D2 > 0 ? 2 : 1) + s.bq * (sh.Dv + sh.D + sh.D2) +
                                                      s.bk * (sh.D + sh.D2 + sh.Dv));
  const double spill = 1.0 + 0.25 * step_bytes / l2;
  // Dot products use a quarter of the register tile's throughput.
  const double compute = (flops * (s.transpose_k ? 1.0 : 2.5) + softmax) * spill / (0.7 * peak);
  // K and V streamed once per query block (once when K is V), and K^T
  // written and read again when packed.
  const double bandwidth = (t.peaks.stream_gbs_all > 0 ? t.peaks.stream_gbs_all : 20) * 1e9 * busy;
  const double blocks = static_cast<double>(sh.M / std::max<int64_t>(1, s.bq));
  // K read again as V while in cache (MLA's c_kv): once, when the keys are
  // not packed up front (dot products, or a block packed just before use).
  const bool k_is_v = a.qk.b_base == a.pv.b_base && sh.k_batch == sh.v_batch && sh.k_n == sh.v_k && sh.D == sh.Dv;
  const bool packed_up_front = s.transpose_k && s.bq != sh.M;
  const double key_reads = k_is_v && !packed_up_front ? 0.0 : sh.D;
  // A batch's keys and values (and K^T) for every thread at once: where
  // they fit in the last-level cache, the query blocks after the first read
  // them from there, at about a byte per flop of a core's FMA peak (L2 to
  // L1: 32 bytes a cycle of AVX2's 32 flops), not from memory. Counting
  // them as memory traffic ranked 256-row query blocks first and the search
  // timed them before 64 (m5: 4 candidates in a 30 s budget, all of them
  // bq = 256 but the default).
  const double batch_keys = 4.0 * static_cast<double>(sh.N) * (key_reads + sh.D2 + sh.Dv + (packed_up_front ? sh.D + sh.D2 : 0.0));
  const bool keys_cached = batch_keys * static_cast<double>(used) <= target::last_level_cache_bytes(t);
  const double first_reads = keys_cached ? std::min(blocks, 1.0) : blocks;
  const double bytes = 4.0 * sh.batch * sh.N *
                       (first_reads * (key_reads + sh.D2 + sh.Dv) + (packed_up_front ? 2.0 * (sh.D + sh.D2) : 0.0));
  const double rereads = 4.0 * sh.batch * sh.N * (blocks - first_reads) * (key_reads + sh.D2 + sh.Dv);
  const double cache_bandwidth = lane_peak * 1e9 * static_cast<double>(used) * busy;
  // Split-KV's partial outputs, written and read again by the combine.
  const double partials = items > sh.batch ? 8.0 * static_cast<double>(items) * sh.M * (sh.Dv + 2) : 0.0;
  return compute + (bytes + partials) / bandwidth + rereads / cache_bandwidth;
}

tile::Kernel attention_kernel(const ir::Graph& g, const loop::AttentionGroup& a, const tile::AttentionSchedule& s,
                              const std::string& fn) {
  // The extras read from memory, in order; the computed ones have no buffer.
  std::vector<tile::Buffer> extra;
  std::vector<int> buffer_of(a.extra.size(), -1);
  for (size_t i = 0; i < a.extra.size(); ++i) {
    if (a.computed.at(i)) continue;
    // The second score product is computed in the kernel, not read.
    if (a.has_qk2 && static_cast<int>(i) == (a.s2_param < a.s_param ? a.s2_param : a.s2_param - 1)) continue;
    const ir::Type& ty = g[a.extra[i]].type;
    buffer_of[i] = static_cast<int>(extra.size());
    extra.push_back(tile::Buffer{"E" + std::to_string(i), ty.dtype, ty.shape, tile::Scope::Input,
                                 static_cast<int>((a.has_qk2 ? 5 : 3) + extra.size())});
  }
  // The params each prologue reads besides its source, after the score's
  // extras: Q's, then K's.
  tile::AttentionPrologue pro;
  std::vector<int> q_extra, k_extra;  // per param of the prologue's graph: its index in `extra`
  for (auto [pr, index] : {std::pair{&a.q_rows, &q_extra}, std::pair{&a.k_rows, &k_extra}}) {
    index->assign(pr->graph.params.size(), -1);
    for (int p : pr->reads) {
      const ir::Type& ty = pr->graph.params.at(static_cast<size_t>(p)).type;
      (*index)[static_cast<size_t>(p)] = static_cast<int>(extra.size());
      extra.push_back(tile::Buffer{std::string(pr == &a.q_rows ? "Pq" : "Pk") + std::to_string(p), ty.dtype, {ty.numel()},
                                   tile::Scope::Input, static_cast<int>(3 + extra.size())});
    }
  }
  auto row_fn = [&](const loop::Prologue& pr, const std::vector<int>& index, int source_buffer,
                    const std::string& tag) -> tile::AttentionPrologue::RowFn {
    if (pr.out < 0) return {};
    return [&pr, &index, source_buffer, tag](tile::Kernel* k, const tile::Index& b, const tile::Index& row, int dst,
                                             const tile::Index& off, const std::vector<int>& bufs) {
      // Param p at idx: the source is Q's or K's buffer, the rest extras;
      // all dense row-major.
      auto param = [&](int p, const std::vector<tile::Index>& idx) {
        const ir::Type& ty = pr.graph.params.at(static_cast<size_t>(p)).type;
        tile::Index flat(0);
        int64_t stride = 1;
        for (int d = ty.rank() - 1; d >= 0; --d) {
          flat = flat + idx.at(static_cast<size_t>(d)) * tile::Index(stride);
          stride *= ty.shape[static_cast<size_t>(d)];
        }
        const int buf = p == pr.source ? source_buffer : bufs.at(static_cast<size_t>(index.at(static_cast<size_t>(p))));
        return tile::Value::load(buf, {flat}, ty.dtype);
      };
      return tile::row_function(k, pr.graph, pr.out, {b, row}, param, dst, off, tag);
    };
  };
  // Buffers 0 and 1 are Q and K (tile/lower_attention.h).
  pro.q = row_fn(a.q_rows, q_extra, 0, "rq");
  pro.k = row_fn(a.k_rows, k_extra, 1, "rk");
  const ir::Graph& sg = a.score_graph;
  tile::ScoreFn2 score = [&](const std::vector<tile::Index>& bij, const tile::Value& sv, const tile::Value& s2v,
                             const std::vector<int>& bufs) {
    return tile::inline_value(sg, a.score, bij, [&](int param, const std::vector<tile::Index>& idx) {
      if (param == a.s_param) return sv;
      if (a.has_qk2 && param == a.s2_param) return s2v;
      const size_t e = static_cast<size_t>(param < a.s_param ? param : param - 1);
      if (a.computed.at(e))
        return tile::inline_value(g, a.extra[e], idx, [](int, const std::vector<tile::Index>&) -> tile::Value {
          throw InternalError("attention: a computed extra reads a parameter");
        });
      return tile::Value::load(bufs.at(static_cast<size_t>(buffer_of[e])), idx, sg.params.at(static_cast<size_t>(param)).type.dtype);
    });
  };
  tile::Kernel k = tile::lower_attention(attention_shape_of(a), s, extra, score, fn, pro);
  tile::require_well_formed(k, "the attention's tile program");
  return k;
}

}  // namespace axon::codegen
