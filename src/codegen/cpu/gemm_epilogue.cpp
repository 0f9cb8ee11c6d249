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
  std::vector<schedule::Knob> k = gemm_knobs(gemm_shape_of(e.gemm), t, prefix);
  k.push_back({prefix + "epilogue", {1, 0},
               "1: the elementwise epilogue on each register tile after its last K slice; 0: one pass over C after"});
  return k;
}

GemmSchedule epilogue_schedule_from(const schedule::Schedule& s, const std::string& prefix) {
  GemmSchedule r = gemm_schedule_from(s, prefix);
  if (auto it = s.find(prefix + "epilogue"); it != s.end()) r.epilogue = static_cast<int>(it->second);
  return r;
}

std::string epilogue_why_illegal(const loop::EpilogueGroup& e, const GemmSchedule& s, const target::Target& t) {
  if (s.epilogue != 0 && s.epilogue != 1) return "gemm: epilogue is 0 (one pass after) or 1 (on each tile)";
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
  const double ops = elements * static_cast<double>(e.graph.size()) / (2e9 * lanes * threads);
  double extra_bytes = 0;
  for (ir::NodeId x : e.extra) extra_bytes += static_cast<double>(g[x].type.numel()) * ir::dtype_bytes(g[x].type.dtype);
  double sec = gemm_predicted_seconds(shape, s, t) + ops + extra_bytes / bw;
  if (!s.epilogue) sec += 2 * 4 * elements / bw;
  return sec;
}

tile::Kernel epilogue_kernel(const ir::Graph& g, const loop::EpilogueGroup& e, const GemmSchedule& s,
                             const std::string& fn) {
  tile::GemmEpilogue ep;
  for (size_t i = 0; i < e.extra.size(); ++i) {
    const ir::Type& ty = g[e.extra[i]].type;
    ep.extra.push_back(tile::Buffer{"E" + std::to_string(i), ty.dtype, ty.shape, tile::Scope::Input});
  }
  const ir::Graph& sg = e.graph;
  ep.f = [&](const tile::Index& b, const tile::Index& m, const tile::Index& n, const tile::Value& c,
             const std::vector<int>& bufs) {
    // The product's output index, axis by axis.
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
    return tile::inline_value(sg, e.value, at, [&](int param, const std::vector<tile::Index>& idx) {
      if (param == e.c_param) {
        // loop/epilogue_group.h: the product is read at the element computed.
        for (size_t d = 0; d < at.size(); ++d)
          if (!idx.at(d).same_as(at[d])) throw InternalError("the epilogue reads the product at another element");
        return c;
      }
      const int x = param < e.c_param ? param : param - 1;
      return tile::Value::load(bufs.at(static_cast<size_t>(x)), idx, sg.params.at(static_cast<size_t>(param)).type.dtype);
    });
  };
  tile::Kernel k = tile::lower_gemm(gemm_shape_of(e.gemm), s, fn, &ep);
  tile::require_well_formed(k, "the GEMM epilogue's tile program");
  return k;
}

}  // namespace axon::codegen
