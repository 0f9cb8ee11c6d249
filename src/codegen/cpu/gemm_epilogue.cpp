#include "codegen/cpu/gemm_epilogue.h"

#include <algorithm>

#include "codegen/c_like/tile_cpp.h"
#include "codegen/cpu/stage_knobs.h"
#include "support/diagnostic.h"
#include "tile/inline_value.h"
#include "tile/lower_gemm.h"
#include "tile/verify.h"

namespace axon::codegen {

std::vector<schedule::Knob> epilogue_knobs(const loop::EpilogueGroup& e, const target::Target& t,
                                           const std::string& prefix) {
  // Paired on one panel (the default), the product is twice as wide: its
  // blocks count both products' columns (nc), so the defaults (nc, and
  // column blocks where they split evenly over the threads) are the wide
  // product's.
  GemmShape shape = gemm_shape_of(e.gemm);
  if (e.paired) shape.N *= 2;
  std::vector<schedule::Knob> k = gemm_knobs(shape, t, prefix);
  k.push_back({prefix + "epilogue", {1, 0},
               "1: the elementwise epilogue on each register tile after its last K slice; 0: one pass over C after"});
  if (e.paired)
    k.push_back({prefix + "pair", {1, 0},
                 "1: both products from one A panel, B and B2 side by side in each packed panel; 0: one after the other"});
  return k;
}

GemmSchedule epilogue_schedule_from(const schedule::Schedule& s, const std::string& prefix) {
  GemmSchedule r = gemm_schedule_from(s, prefix);
  if (auto it = s.find(prefix + "epilogue"); it != s.end()) r.epilogue = static_cast<int>(it->second);
  if (auto it = s.find(prefix + "pair"); it != s.end()) r.pair = static_cast<int>(it->second);
  return r;
}

std::string epilogue_why_illegal(const loop::EpilogueGroup& e, const GemmSchedule& s, const target::Target& t) {
  if (s.epilogue != 0 && s.epilogue != 1) return "gemm: epilogue is 0 (one pass after) or 1 (on each tile)";
  if (e.paired && s.pair == 1) {
    // Both products on one panel: nr/2 columns of each, packed (the halves
    // interleave), the epilogue on each tile (Cpair holds one block).
    if (s.nr % 2 != 0) return "gemm: pair 1 splits a panel in halves, and nr is odd";
    if (!s.pack_b) return "gemm: pair 1 packs B and B2 into one panel (pack_b 1)";
    if (!s.epilogue) return "gemm: pair 1 applies the epilogue on each tile (epilogue 1)";
  } else if (e.paired && s.pair != 0) {
    return "gemm: pair is 1 (one A panel for both products) or 0 (one after the other)";
  }
  return gemm_why_illegal(gemm_shape_of(e.gemm), s, t);
}

double epilogue_seconds(const ir::Graph& g, const loop::EpilogueGroup& e, const GemmSchedule& s,
                        const target::Target& t) {
  const GemmShape shape = gemm_shape_of(e.gemm);
  const double elements = static_cast<double>(shape.batch) * shape.M * shape.N;
  const double lanes = std::max(1, t.isa.vector_bits() / 32);
  const int threads = std::max(1, std::min(s.threads, std::max(1, t.cores)));
  const double bw = (t.peaks.stream_gbs_all > 0 ? t.peaks.stream_gbs_all : 20.0) * 1e9;
  // About one vector op per node of the function at every element.
  const double nodes = static_cast<double>(e.graph.size() + (e.paired ? e.graph2.size() : 0));
  const double ops = elements * nodes / (2e9 * lanes * threads);
  double extra_bytes = 0;
  for (const auto* list : {&e.extra, &e.extra2})
    for (ir::NodeId x : *list) extra_bytes += static_cast<double>(g[x].type.numel()) * ir::dtype_bytes(g[x].type.dtype);
  double product = gemm_predicted_seconds(shape, s, t);
  if (e.paired && s.pair == 1) {
    // One product twice as wide, A read once.
    GemmShape wide = shape;
    wide.N *= 2;
    product = gemm_predicted_seconds(wide, s, t);
  } else if (e.paired) {
    // Two products, the first stored whole and read again.
    product *= 2;
    product += 2 * 4 * elements / bw;
  }
  double sec = product + ops + extra_bytes / bw;
  if (!s.epilogue) sec += 2 * 4 * elements / bw;
  return sec;
}

tile::Kernel epilogue_kernel(const ir::Graph& g, const loop::EpilogueGroup& e, const GemmSchedule& s,
                             const std::string& fn, const tile::GemmPrologue* p) {
  tile::GemmEpilogue ep;
  std::vector<ir::NodeId> inputs = e.extra;
  inputs.insert(inputs.end(), e.extra2.begin(), e.extra2.end());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Type& ty = g[inputs[i]].type;
    ep.extra.push_back(tile::Buffer{"E" + std::to_string(i), ty.dtype, ty.shape, tile::Scope::Input});
  }
  const ir::Graph& sg = e.graph;
  // The product's output index at C's element (b, m, n), axis by axis.
  auto index_at = [&](const tile::Index& b, const tile::Index& m, const tile::Index& n) {
    // A role of several axes is one flat index: axis d takes (i / inner[d])
    // % extent[d], without the remainder on the role's outermost axis.
    const ir::Shape& shape = sg.params.at(static_cast<size_t>(e.c_param)).type.shape;
    std::vector<tile::Index> at;
    for (size_t d = 0; d < e.roles.size(); ++d) {
      const int role = e.roles[d];
      if (role < 0) {
        at.push_back(tile::Index(0));
        continue;
      }
      tile::Index i = role == 0 ? b : role == 1 ? m : n;
      const int64_t inner = d < e.inner.size() ? e.inner[d] : 1;
      bool outermost = true;
      for (size_t o = 0; o < d; ++o) outermost = outermost && e.roles[o] != role;
      if (inner > 1) i = i / tile::Index(inner);
      if (!outermost) i = i % tile::Index(shape[d]);
      at.push_back(i);
    }
    return at;
  };
  // loop/epilogue_group.h, loop/paired_epilogue.h: a product (a gate) is
  // read at the element computed.
  auto same_element = [](const std::vector<tile::Index>& idx, const std::vector<tile::Index>& at) {
    for (size_t d = 0; d < at.size(); ++d)
      if (!idx.at(d).same_as(at[d])) throw InternalError("the epilogue reads the product at another element");
  };
  // Graph `sg2`'s param p among the inputs: those before it less the ones
  // that are no input (the products, the gate), after `first` inputs.
  auto input_of = [](int p, std::vector<int> not_inputs, size_t first) {
    int x = p;
    for (int q : not_inputs) x -= q >= 0 && q < p;
    return static_cast<size_t>(x) + first;
  };
  auto value_of = [&](const std::vector<tile::Index>& at, const tile::Value& c, const tile::Value* c2,
                      const std::vector<int>& bufs) {
    return tile::inline_value(sg, e.value, at, [&](int param, const std::vector<tile::Index>& idx) {
      if (param == e.c_param) {
        same_element(idx, at);
        return c;
      }
      if (c2 && param == e.g_param) {
        // The first product's stage, at the same element.
        same_element(idx, at);
        return tile::inline_value(e.graph2, e.value2, at, [&](int p2, const std::vector<tile::Index>& idx2) {
          if (p2 == e.c2_param) {
            same_element(idx2, at);
            return *c2;
          }
          return tile::Value::load(bufs.at(input_of(p2, {e.c2_param}, e.extra.size())), idx2,
                                   e.graph2.params.at(static_cast<size_t>(p2)).type.dtype);
        });
      }
      return tile::Value::load(bufs.at(input_of(param, {e.c_param, c2 ? e.g_param : -1}, 0)), idx,
                               sg.params.at(static_cast<size_t>(param)).type.dtype);
    });
  };
  if (e.paired) {
    ep.paired = true;
    ep.f2 = [&](const tile::Index& b, const tile::Index& m, const tile::Index& n, const tile::Value& c,
                const tile::Value& c2, const std::vector<int>& bufs) { return value_of(index_at(b, m, n), c, &c2, bufs); };
  } else {
    ep.f = [&](const tile::Index& b, const tile::Index& m, const tile::Index& n, const tile::Value& c,
               const std::vector<int>& bufs) { return value_of(index_at(b, m, n), c, nullptr, bufs); };
  }
  tile::Kernel k = tile::lower_gemm(gemm_shape_of(e.gemm), s, fn, &ep, p);
  tile::require_well_formed(k, "the GEMM epilogue's tile program");
  return k;
}

}  // namespace axon::codegen
