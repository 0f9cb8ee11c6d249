// Knobs, emitter options and predicted times of the stage kinds.
#include "codegen/cpu/stage_knobs.h"

#include "codegen/c_like/tile_cpp.h"

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <tuple>

#include "analysis/cost.h"
#include "tile/passes/mark_loops.h"

namespace axon::codegen {

std::string stage_prefix(int i) { return "k" + std::to_string(i) + "."; }

namespace {

std::vector<int64_t> thread_values(const target::Target& t) {
  std::vector<int64_t> v = {std::max(1, t.cores)};
  for (int i = 1; i < t.cores; ++i) v.push_back(i);
  return v;
}

double bandwidth(const target::Target& t, int threads) {
  const double bw_1t = t.peaks.stream_gbs_1t > 0 ? t.peaks.stream_gbs_1t * 1e9 : 12e9;
  const double bw_all = t.peaks.stream_gbs_all > 0 ? t.peaks.stream_gbs_all * 1e9 : 20e9;
  return std::min(bw_all, bw_1t * threads);
}

double numel(const CopyShape& c) {
  double n = 1;
  for (int64_t d : c.shape) n *= static_cast<double>(d);
  return n;
}

}  // namespace

std::vector<schedule::Knob> row_stage_knobs(const loop::RowKernel& k, const target::Target& t,
                                            const std::string& p) {
  std::vector<schedule::Knob> knobs;
  if (t.isa.vector_bits() > 0)
    knobs.push_back({p + "vec_axis", {1, 0}, "1: vectorise the row (last) axis; 0: scalar code"});
  else
    knobs.push_back({p + "vec_axis", {0}, "scalar code (the target has no vector ISA)"});
  knobs.push_back({p + "threads", thread_values(t), "OpenMP threads over the row loop"});
  knobs.push_back({p + "row_block", {0, 1, 8, 64}, "rows per OpenMP chunk, dealt in turn (0: even static split)"});
  knobs.push_back({p + "unroll", {2, 1, 4}, "vectors per step of a vector loop without a reduction, interleaved as one tuple"});
  if (!k.row_outputs.empty() && t.isa.vector_bits() > 0)
    knobs.push_back({p + "nt_store", {0, 1}, "1: streaming (non-temporal) stores of row outputs"});
  if (!k.row_params.empty() && t.isa.vector_bits() > 0)
    knobs.push_back({p + "stream_prefetch", {0, 4096, 8192},
                     "bytes ahead the memory pass prefetches its row inputs, non-temporal (0: none)"});
  if (k.passes() >= 2 && !k.row_params.empty() && t.isa.vector_bits() > 0) {
    // Later passes compute from cache while memory idles: one of them can
    // fetch the next row meanwhile.
    std::vector<int64_t> v = {0};
    for (int i = 1; i < k.passes(); ++i) v.push_back(i);
    knobs.push_back({p + "prefetch_pass", v, "0: none; p: the p-th vector loop reading the row prefetches the next row's inputs"});
  }
  return knobs;
}

namespace {

// Partial sums of a vector sum as the tile printer keeps them on `t`.
int sum_partials(const target::Target& t) {
  return t.isa.vector_bits() >= 256 ? t.isa.vector_bits() / 32 * kVectorChains : 1;
}

// The side of transpose_blocks' blocks on `t` when loops vectorise: the
// register transpose's (a vector's float32 lanes), 0 without one.
int transpose_block(const target::Target& t, bool vectorize) {
  return vectorize && t.isa.vector_bits() >= 256 ? t.isa.vector_bits() / 32 : 0;
}

int64_t knob(const schedule::Schedule& s, const std::string& name, int64_t dflt) {
  auto it = s.find(name);
  return it == s.end() ? dflt : it->second;
}

}  // namespace

tile::LoopsOptions row_stage_loops_options(const schedule::Schedule& s, const target::Target& t, const std::string& p) {
  tile::LoopsOptions o;
  o.threads = static_cast<int>(knob(s, p + "threads", std::max(1, t.cores)));
  o.vectorize = knob(s, p + "vec_axis", 1) != 0 && t.isa.vector_bits() > 0;
  o.sum_partials = sum_partials(t);
  o.prefetch_bytes = knob(s, p + "stream_prefetch", 0);
  o.prefetch_pass = static_cast<int>(knob(s, p + "prefetch_pass", 0));
  o.stream_stores = knob(s, p + "nt_store", 0) != 0;
  o.chunk = knob(s, p + "row_block", 0);
  o.transpose_block = transpose_block(t, o.vectorize);
  return o;
}

int row_stage_unroll(const schedule::Schedule& s, const std::string& p) {
  return static_cast<int>(knob(s, p + "unroll", 1));
}

GemmShape gemm_shape_of(const loop::Contraction& c) {
  GemmShape g;
  g.batch = c.batch, g.M = c.M, g.N = c.N, g.K = c.K;
  g.a_batch = c.a_batch, g.a_m = c.a_m, g.a_k = c.a_k;
  g.b_batch = c.b_batch, g.b_k = c.b_k, g.b_n = c.b_n;
  g.c_batch = c.c_batch, g.c_m = c.c_m, g.c_n = c.c_n;
  return g;
}

CopyShape copy_shape_of(const ir::Graph& g, const loop::Stage& s) {
  const ir::Node& n = g[s.nodes.at(0)];
  CopyShape c;
  c.shape = n.type.shape;
  c.in_strides = s.copy.in_strides;
  c.dtype = n.type.dtype;
  return c;
}

std::vector<schedule::Knob> copy_knobs(const CopyShape& c, const target::Target& t, const std::string& p) {
  std::vector<schedule::Knob> k;
  k.push_back({p + "tile", {256, 64, 128, 32, 512, 16}, "edge of a block of the transposed plane"});
  k.push_back({p + "threads", thread_values(t), "OpenMP threads over the blocks"});
  if (t.isa.vector_bits() >= 256 && c.element_bytes() == 4) {
    k.push_back({p + "vector", {1, 0}, "1: register transposes"});
    if (t.isa.vector_bits() >= 512)
      k.push_back({p + "width", {16, 8}, "edge of a register block: 16 x 16 (AVX-512) or 8 x 8"});
    else
      k.push_back({p + "width", {8}, "edge of a register block: 8 x 8 (AVX2)"});
    k.push_back({p + "order", {0, 1}, "within a tile: 0 bands of input rows streamed, 1 bands of output rows"});
    // Past the last-level cache the output's lines are better written
    // without being read first; inside it, a normal store keeps them cached.
    const bool past_llc = 2.0 * numel(c) * c.element_bytes() > target::last_level_cache_bytes(t);
    k.push_back({p + "nt_store", past_llc ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{0, 1},
                 "1: streaming stores of the transposed blocks"});
    k.push_back({p + "band", past_llc ? std::vector<int64_t>{4, 1, 2, 8} : std::vector<int64_t>{1, 2, 4, 8},
                 "order 0: bands of 16 x band input rows, band lines per output row and step"});
  } else {
    k.push_back({p + "vector", {0}, "scalar copies (no 256-bit vectors or not 4-byte elements)"});
  }
  return k;
}

CopySchedule copy_schedule_from(const schedule::Schedule& s, const std::string& p) {
  CopySchedule c;
  auto get = [&](const char* name, int64_t dflt) {
    auto it = s.find(p + name);
    return it == s.end() ? dflt : it->second;
  };
  c.tile = static_cast<int>(get("tile", 32));
  c.threads = static_cast<int>(get("threads", 1));
  c.vector = get("vector", 0) != 0;
  c.width = static_cast<int>(get("width", 8));
  c.order = static_cast<int>(get("order", 0));
  c.nt_store = get("nt_store", 0) != 0;
  c.band = static_cast<int>(get("band", 1));
  return c;
}

std::string copy_why_illegal(const CopyShape& c, const CopySchedule& s, const target::Target& t) {
  if (s.tile < 8 || s.tile > 512 || (s.tile % 16 != 0 && s.tile != 8))
    return "copy: tile " + std::to_string(s.tile) + " is not 8 or a multiple of 16 in [16, 512]";
  if (s.threads < 1 || s.threads > std::max(1, t.cores)) return "copy: threads out of range";
  if (s.vector && (t.isa.vector_bits() < 256 || c.element_bytes() != 4)) return "copy: register transposes need AVX2 and 4-byte elements";
  if (s.vector && s.width != 8 && s.width != 16) return "copy: register blocks are 8 x 8 or 16 x 16";
  if (s.vector && s.width == 16 && t.isa.vector_bits() < 512) return "copy: 16 x 16 register transposes need AVX-512";
  if (s.vector && s.tile % s.width != 0) return "copy: tile " + std::to_string(s.tile) + " is no multiple of the register block " + std::to_string(s.width);
  if (s.order != 0 && s.order != 1) return "copy: order is 0 (input rows streamed) or 1 (output rows streamed)";
  if (s.band != 1 && s.band != 2 && s.band != 4 && s.band != 8) return "copy: band is 1, 2, 4 or 8";
  if (s.band != 1 && (!s.vector || s.order != 0))
    return "copy: band " + std::to_string(s.band) + " needs register transposes with input rows streamed (order 0)";
  if (s.band != 1 && 16 * s.band > s.tile)
    return "copy: a band of " + std::to_string(16 * s.band) + " input rows exceeds the tile " + std::to_string(s.tile);
  if (c.shape.size() != c.in_strides.size()) return "copy: one stride per axis";
  return "";
}

double copy_seconds(const CopyShape& c, const CopySchedule& s, const target::Target& t) {
  const double bytes = 2 * numel(c) * c.element_bytes();
  double sec = bytes / bandwidth(t, s.threads) * (s.vector ? 1.0 : 2.0);
  if (s.vector) {
    if (s.width == 8) sec *= 1.1;   // twice the shuffles per element, half-line stores
    if (s.order == 1) sec *= 1.3;   // the input is read down column strips
  }
  if (s.tile < 32) sec *= 1.2;
  if (s.nt_store && bytes > target::last_level_cache_bytes(t)) {
    sec *= 0.8;  // no read-for-ownership of the output
    // Streamed lines reach memory in runs of `band` per output row, not one at a time.
    if (s.band >= 4) sec *= 0.8;
    else if (s.band == 2) sec *= 0.95;
    // And a tile's edge starts new runs: on s8 with bands of 4, tiles of 512,
    // 256 and 128 ran 0.744, 0.845 and 1.026 ms side by side.
    sec *= 1 + 32.0 / s.tile;
  }
  return sec + (s.threads > 1 ? 3e-6 : 0);
}


std::vector<schedule::Knob> loops_knobs(const target::Target& t, const std::string& prefix) {
  std::vector<int64_t> threads = {std::max(1, t.cores)};
  if (t.cores > 2) threads.push_back(t.cores / 2);
  if (t.cores > 1) threads.push_back(1);
  return {{prefix + "loops.threads", threads, "threads of the outermost loop of each large nest"},
          {prefix + "loops.inline", {1, 0}, "recompute elementwise values where read (1) or store them (0)"},
          {prefix + "loops.vectorize", {1, 0}, "innermost loops as vector lanes"},
          {prefix + "loops.split", {1, 0},
           "with threads: a long reduction outside every parallel loop split across them (1), or left on one (0)"},
          {prefix + "loops.nt_store", {0, 1}, "with vectors: outputs written lane by lane stored past the caches (1)"}};
}

tile::LoopsOptions loops_options(const schedule::Schedule& s, const target::Target& t, const std::string& prefix) {
  auto get = [&](const std::string& k, int64_t dflt) {
    auto it = s.find(prefix + k);
    return it == s.end() ? dflt : it->second;
  };
  tile::LoopsOptions o;
  o.threads = static_cast<int>(get("loops.threads", std::max(1, t.cores)));
  o.inline_maps = get("loops.inline", 1) != 0;
  o.vectorize = get("loops.vectorize", 1) != 0;
  o.split_reductions = get("loops.split", 1) != 0;
  o.stream_stores = o.vectorize && get("loops.nt_store", 0) != 0;
  o.sum_partials = sum_partials(t);
  o.transpose_block = transpose_block(t, o.vectorize);
  return o;
}

namespace {

// What the tile program of a loops kernel says about its cost: the fraction
// of its innermost iterations under a parallel loop, and the memory traffic
// of its innermost loops' loads per element loaded (1 when every load walks
// unit stride or stays put; a whole cache line for each strided one).
struct LoopsShape {
  double on_threads = 1;
  double traffic = 1;
};

LoopsShape loops_shape(const tile::Kernel& k) {
  LoopsShape out;
  const int64_t all = tile::points(k.body);
  int64_t parallel = 0;
  double unit = 0, strided = 0, strided_lines = 0;
  // `outer`: iterations of the loops around `s`; `par`: inside a parallel one.
  std::function<void(const tile::Stmt&, double, bool)> walk = [&](const tile::Stmt& s, double outer, bool par) {
    if (s.kind() == tile::StmtKind::For) {
      std::optional<tile::Interval> e = tile::bounds(s->extent, {});
      const double n = e ? static_cast<double>(std::max<int64_t>(e->hi, 0)) : 1;
      const bool here = !par && s->loop == tile::LoopKind::Parallel;
      if (here) parallel += tile::points(s);
      bool innermost = true;
      tile::visit(s->body.at(0), [&](const tile::Stmt& x) { innermost &= x.kind() != tile::StmtKind::For; });
      if (innermost) {
        tile::visit(s->body.at(0), [&](const tile::Stmt& x) {
          if (!x->value.defined()) return;
          x->value.visit_loads([&](const tile::Value& l) {
            const tile::Buffer& b = k.buffers[static_cast<size_t>(l.buffer())];
            if (b.scope == tile::Scope::Register || b.scope == tile::Scope::Scratch) return;
            std::optional<tile::Affine> a = tile::as_affine(tile::flat_index(b.shape, l.idx()));
            const int64_t c = a && a->coef.count(s->var) ? a->coef.at(s->var) : (a ? 0 : 2);
            if (c == 0) return;
            if (c == 1 || c == -1) {
              unit += outer * n;
            } else {
              strided += outer * n;
              strided_lines += outer * n * std::max(1, 64 / ir::dtype_bytes(b.dtype));
            }
          });
        });
      }
      walk(s->body.at(0), outer * n, par || here);
      return;
    }
    for (const tile::Stmt& c : s->body) walk(c, outer, par);
  };
  walk(k.body, 1, false);
  if (all > 0) out.on_threads = std::min(1.0, static_cast<double>(parallel) / static_cast<double>(all));
  if (unit + strided > 0) out.traffic = (unit + strided_lines) / (unit + strided);
  return out;
}

}  // namespace

double loops_seconds(const ir::Graph& sub, const tile::LoopsOptions& o, const target::Target& t) {
  analysis::Cost c = analysis::graph_cost(sub);
  // Fused nests read each input about once; vector lanes and threads divide
  // the arithmetic. A rough ranking between the knobs, not a prediction.
  const double lanes = o.vectorize ? std::max(1, t.isa.vector_bits() / 32) : 1;
  const double bytes = o.inline_maps ? c.bytes / 2 : c.bytes;
  const int threads = std::max(1, o.threads);
  // From the program itself: the work outside every parallel loop runs on
  // one thread (Amdahl), and strided loads move a line per element. The
  // search asks for every point of a space: one lowering per graph and the
  // options that decide the loops' order and kinds, cached.
  static std::mutex mu;
  static std::map<std::tuple<uint64_t, std::string, int, bool, bool, bool, bool>, LoopsShape> seen;
  const auto key = std::make_tuple(sub.structural_hash(), sub.entry, threads, o.inline_maps, o.inline_reused, o.fuse,
                                   o.split_reductions);
  LoopsShape shape;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = seen.find(key);
    if (it != seen.end()) known = true, shape = it->second;
  }
  if (!known) {
    tile::LoopsOptions plain = o;
    plain.vectorize = false;  // the same loops, kinds and loads, fewer passes
    plain.prefetch_bytes = 0;
    plain.prefetch_pass = 0;
    plain.stream_stores = false;
    try {
      shape = loops_shape(tile::lower_with(sub, tile::loops_pipeline(plain), "cost"));
    } catch (const std::exception&) {
      // The emitter reports what failed; the cost stays the estimate's.
    }
    std::lock_guard<std::mutex> lock(mu);
    seen[key] = shape;
  }
  auto part = [&](int n) { return bytes * shape.traffic / bandwidth(t, n) + c.flops / (2e9 * lanes * n); };
  double sec = shape.on_threads * part(threads) + (1 - shape.on_threads) * part(1);
  // Streamed outputs help only past the caches; chunks of one row cost a
  // hand-out each (factors first measured with the row kernel emitter).
  if (o.stream_stores && c.bytes < 8 * double(int64_t{1} << 20)) sec *= 1.2;
  // Past the last-level cache they save the read-for-ownership of the
  // output (the layout copy's factor).
  if (o.stream_stores && c.bytes > static_cast<double>(target::last_level_cache_bytes(t))) sec *= 0.8;
  if (o.chunk == 1) sec *= 1.05;
  if (o.prefetch_pass > 0) sec *= 0.95;  // memory overlaps the later passes (the row kernel's factor)
  return sec;
}

TileCppOptions tile_printer_options(const target::Target& t) {
  TileCppOptions p;
  p.vector_bits = t.isa.vector_bits() >= 256 ? t.isa.vector_bits() : 0;
  return p;
}

}  // namespace axon::codegen
