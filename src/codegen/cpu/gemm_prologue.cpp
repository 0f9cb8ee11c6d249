#include "codegen/cpu/gemm_prologue.h"

#include <algorithm>

#include "support/diagnostic.h"
#include "tile/inline_value.h"

namespace axon::codegen {

namespace {

// The prologue of operand `which` (0 A, 1 B).
const loop::Prologue& of(const loop::Stage& st, int which) { return which == 0 ? st.a_rows : st.b_rows; }

// The operand's dense index (b, i, j): [i, j] at rank 2, [b, i, j] at rank 3.
std::vector<tile::Index> dense_index(const ir::Type& t, const tile::Index& b, const tile::Index& i, const tile::Index& j) {
  if (t.rank() == 2) return {i, j};
  if (t.rank() == 3) return {b, i, j};
  throw InternalError("gemm prologue: an operand of rank " + std::to_string(t.rank()));
}

// Flat offset of a dense row-major index.
tile::Index flat(const ir::Shape& shape, const std::vector<tile::Index>& idx) {
  tile::Index at(0);
  for (size_t d = 0; d < shape.size(); ++d) at = at * tile::Index(shape[d]) + idx.at(d);
  return at;
}

}  // namespace

bool has_prologue(const loop::Stage& st) { return st.a_rows.active() || st.b_rows.active(); }

std::vector<schedule::Knob> with_prologue_knobs(std::vector<schedule::Knob> knobs, const loop::Stage& st,
                                                const std::string& prefix) {
  if (!has_prologue(st)) return knobs;
  auto first_one = [&](const std::string& name) {
    for (schedule::Knob& k : knobs)
      if (k.name == prefix + name) {
        auto it = std::find(k.values.begin(), k.values.end(), 1);
        if (it != k.values.end()) std::rotate(k.values.begin(), it, it + 1);
      }
  };
  // A computed as packed costs a transposing copy per element of every
  // column block (bench/RESULTS.md: m11's softmax 1.05x the time of A
  // computed first and read in place), B's a vector multiply per element
  // packed once: the default computes A first and B as packed.
  const bool a_first = st.a_rows.active();
  if (!a_first) first_one("pack_b");
  knobs.push_back({prefix + "prologue", a_first ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{1, 0},
                   "1: an operand computed by the kernel is computed as it is packed; 0: whole into a buffer first"});
  return knobs;
}

void prologue_schedule_from(const schedule::Schedule& sched, const std::string& prefix, GemmSchedule* s) {
  if (auto it = sched.find(prefix + "prologue"); it != sched.end()) s->prologue = static_cast<int>(it->second);
}

std::string prologue_why_illegal(const loop::Stage& st, const GemmSchedule& s) {
  if (!has_prologue(st)) return "";
  if (s.prologue != 0 && s.prologue != 1) return "gemm: prologue is 1 (as the operand is packed) or 0 (whole, first)";
  if (s.prologue == 1 && st.a_rows.active() && !s.pack_a) return "gemm: prologue 1 computes A as it is packed (pack_a 1)";
  if (s.prologue == 1 && st.b_rows.active() && !s.pack_b) return "gemm: prologue 1 computes B as it is packed (pack_b 1)";
  return "";
}

double prologue_seconds(const ir::Graph& g, const loop::Stage& st, const GemmShape& shape, const GemmSchedule& s,
                        const target::Target& t) {
  if (!has_prologue(st)) return 0;
  const double lanes = std::max(1, t.isa.vector_bits() / 32);
  const int threads = std::max(1, std::min(s.threads, std::max(1, t.cores)));
  const double bw = (t.peaks.stream_gbs_all > 0 ? t.peaks.stream_gbs_all : 20.0) * 1e9;
  double sec = 0;
  for (int which : {0, 1}) {
    const loop::Prologue& pr = of(st, which);
    if (!pr.active()) continue;
    const double elements = static_cast<double>(pr.graph[pr.out].type.numel());
    // A is packed once per column block, B once per row range of threads.
    const double packs = s.prologue == 0 ? 1.0
                         : which == 0     ? static_cast<double>((shape.N + s.nc - 1) / std::max<int64_t>(s.nc, 1))
                                          : 1.0;
    sec += elements * packs * static_cast<double>(pr.graph.size()) / (2e9 * lanes * threads);
    // A's rows go into the panels' columns one element at a time.
    if (which == 0 && s.prologue == 1) sec += elements * packs / (1e9 * threads);
    if (s.prologue == 0) sec += 2 * 4 * elements / bw;  // the operand's round trip
    for (int q : pr.reads) {
      const ir::Type& ty = g[pr.inputs.at(static_cast<size_t>(q))].type;
      sec += static_cast<double>(ty.numel()) * ir::dtype_bytes(ty.dtype) / bw;
    }
  }
  return sec;
}

tile::GemmPrologue gemm_prologue(const ir::Graph& g, const loop::Stage& st) {
  tile::GemmPrologue p;
  if (!has_prologue(st)) return p;
  // The prologues' inputs, A's then B's, as buffers in that order.
  std::vector<size_t> first(2, 0);
  for (int which : {0, 1}) {
    const loop::Prologue& pr = of(st, which);
    first[static_cast<size_t>(which)] = p.extra.size();
    for (int q : pr.reads) {
      const ir::Type& ty = g[pr.inputs.at(static_cast<size_t>(q))].type;
      p.extra.push_back(tile::Buffer{"P" + std::to_string(p.extra.size()), ty.dtype, ty.shape, tile::Scope::Input});
    }
  }
  for (int which : {0, 1}) {
    const loop::Prologue& pr = of(st, which);
    if (!pr.active()) continue;
    const size_t base = first[static_cast<size_t>(which)];
    tile::OperandFn f = [pr, base](const tile::Index& b, const tile::Index& i, const tile::Index& j, int source,
                                   const std::vector<int>& extra) {
      const ir::Type& ot = pr.graph[pr.out].type;
      return tile::inline_value(pr.graph, pr.out, dense_index(ot, b, i, j), [&](int param, const std::vector<tile::Index>& idx) {
        const ir::Type& pt = pr.graph.params.at(static_cast<size_t>(param)).type;
        if (param == pr.source) return tile::Value::load(source, {flat(pt.shape, idx)}, pt.dtype);
        const size_t slot = static_cast<size_t>(std::find(pr.reads.begin(), pr.reads.end(), param) - pr.reads.begin());
        if (slot >= pr.reads.size()) throw InternalError("gemm prologue: a param it does not read");
        return tile::Value::load(extra.at(base + slot), idx, pt.dtype);
      });
    };
    (which == 0 ? p.a : p.b) = f;
  }
  return p;
}

}  // namespace axon::codegen
