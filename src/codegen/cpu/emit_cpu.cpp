// emit_cpu and the schedule space of the CPU code generator.
//
// The graph is partitioned (loop/partition.h): matrix products become
// contraction stages (the GEMM generator, codegen/cpu/gemm.h), runs of
// elementwise chains and row reductions become fused row kernels, transposes
// of buffers tiled layout copies (tile/lower_copy.h), anything
// else a naive loop nest per node; a product whose result only elementwise
// work reads takes that work as its epilogue (loop/epilogue_group.h). A graph that is one row kernel, or has no
// stage axon can speed up, is emitted whole as before (knobs k0.*); others
// get one namespace per stage (codegen/cpu/staged_cpp.h) and knobs k<i>.* per
// stage (codegen/cpu/stage_knobs.h).
#include "codegen/cpu/emit_cpu.h"

#include <algorithm>
#include <memory>

#include "codegen/c_like/naive_cpp.h"
#include "codegen/cpu/attention.h"
#include "codegen/cpu/gemm.h"
#include "codegen/cpu/gemm_epilogue.h"
#include "codegen/cpu/stage_knobs.h"
#include "codegen/cpu/staged_cpp.h"
#include "loop/partition.h"
#include "tile/print.h"

namespace axon {

using codegen::stage_prefix;
using codegen::worth_staging;
using loop::StageKind;

namespace {

// The knobs of every stage of `p`, the partition of `g`.
schedule::Space space_of(const ir::Graph& g, const loop::Partition& p, const target::Target& t) {
  using schedule::Knob;
  schedule::Space sp;
  if (p.whole_graph || !worth_staging(p)) {
    loop::RowKernel k = loop::plan_row_kernel(g);
    sp.knobs = k.ok ? codegen::row_stage_knobs(k, t, stage_prefix(0)) : codegen::loops_knobs(t, stage_prefix(0));
    return sp;
  }
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const loop::Stage& st = p.stages[i];
    const std::string prefix = stage_prefix(static_cast<int>(i));
    std::vector<Knob> k;
    if (st.kind == StageKind::Row) k = codegen::row_stage_knobs(st.row, t, prefix);
    if (st.kind == StageKind::Contraction) k = codegen::gemm_knobs(codegen::gemm_shape_of(st.contraction), t, prefix + "gemm.");
    if (st.kind == StageKind::Copy) k = codegen::copy_knobs(codegen::copy_shape_of(g, st), t, prefix + "copy.");
    if (st.kind == StageKind::Naive) k = codegen::loops_knobs(t, prefix);
    if (st.kind == StageKind::Attention) k = codegen::attention_knobs(st.attention, t, prefix + "attn.");
    if (st.kind == StageKind::Epilogue) k = codegen::epilogue_knobs(st.epilogue, t, prefix + "gemm.");
    sp.knobs.insert(sp.knobs.end(), k.begin(), k.end());
  }
  return sp;
}

// The same graph, node for node: what partition_graph reads.
bool same_graph(const ir::Graph& a, const ir::Graph& b) {
  if (a.entry != b.entry || a.outputs != b.outputs || a.nodes() != b.nodes() || a.params.size() != b.params.size())
    return false;
  for (size_t i = 0; i < a.params.size(); ++i)
    if (a.params[i].name != b.params[i].name || !(a.params[i].type == b.params[i].type)) return false;
  return true;
}

// partition_graph(g) and the space of its stages, kept for the last graph
// and target this thread asked about: a search asks why_illegal and
// predicted_seconds of tens of thousands of schedules of one graph
// (search::autotune's ranking and climbs), and partitioning the graph and
// listing its knobs again each time was most of their cost. The target is
// told apart by its fingerprint (ISA, cores, caches) and its peaks.
struct Planned {
  loop::Partition p;
  schedule::Space space;
};

std::string target_key(const target::Target& t) {
  const target::Peaks& k = t.peaks;
  return t.fingerprint() + ";" + std::to_string(k.fma_gflops_1t) + "/" + std::to_string(k.fma_gflops_all) + "/" +
         std::to_string(k.stream_gbs_1t) + "/" + std::to_string(k.stream_gbs_all);
}

std::shared_ptr<const Planned> planned(const ir::Graph& g, const target::Target& t) {
  struct Last {
    ir::Graph g;
    std::string target;
    std::shared_ptr<const Planned> plan;
  };
  thread_local Last last;
  std::string key = target_key(t);
  if (!last.plan || last.target != key || !same_graph(last.g, g)) {
    last.plan.reset();
    auto plan = std::make_shared<Planned>();
    plan->p = loop::partition_graph(g);
    plan->space = space_of(g, plan->p, t);
    last.g = g;
    last.target = std::move(key);
    last.plan = std::move(plan);
  }
  return last.plan;
}

}  // namespace

schedule::Space schedule::schedule_space(const ir::Graph& g, const target::Target& t) {
  return space_of(g, loop::partition_graph(g), t);
}

std::string schedule::why_illegal(const ir::Graph& g, const Schedule& s, const target::Target& t) {
  const std::shared_ptr<const Planned> plan = planned(g, t);
  const loop::Partition& p = plan->p;
  const Space& sp = plan->space;
  for (const Knob& k : sp.knobs) {
    auto it = s.find(k.name);
    if (it == s.end()) return "knob " + k.name + " has no value";
    if (std::find(k.values.begin(), k.values.end(), it->second) == k.values.end())
      return "knob " + k.name + " = " + std::to_string(it->second) + " is not one of its legal values";
  }
  for (const auto& [name, v] : s)
    if (!sp.find(name)) return "knob " + name + " is not in this graph's space";
  for (const auto& [name, v] : s)
    if (name.size() > 8 && name.compare(name.size() - 8, 8, ".threads") == 0 && v > std::max(1, t.cores))
      return "knob " + name + " = " + std::to_string(v) + ": more threads than cores";
  if (p.whole_graph || !worth_staging(p)) return "";
  for (size_t i = 0; i < p.stages.size(); ++i) {
    if (p.stages[i].kind == StageKind::Copy) {
      const std::string prefix = stage_prefix(static_cast<int>(i)) + "copy.";
      std::string why = codegen::copy_why_illegal(codegen::copy_shape_of(g, p.stages[i]), codegen::copy_schedule_from(s, prefix), t);
      if (!why.empty()) return "stage " + std::to_string(i) + ": " + why;
    }
    if (p.stages[i].kind == StageKind::Attention) {
      const std::string prefix = stage_prefix(static_cast<int>(i)) + "attn.";
      std::string why = codegen::attention_why_illegal(
          p.stages[i].attention, codegen::attention_schedule_from(p.stages[i].attention, s, t, prefix));
      if (!why.empty()) return "stage " + std::to_string(i) + ": " + why;
    }
    if (p.stages[i].kind == StageKind::Epilogue) {
      const std::string prefix = stage_prefix(static_cast<int>(i)) + "gemm.";
      std::string why = codegen::epilogue_why_illegal(p.stages[i].epilogue, codegen::epilogue_schedule_from(s, prefix), t);
      if (!why.empty()) return "stage " + std::to_string(i) + ": " + why;
    }
    if (p.stages[i].kind != StageKind::Contraction) continue;
    const std::string prefix = stage_prefix(static_cast<int>(i)) + "gemm.";
    codegen::GemmShape shape = codegen::gemm_shape_of(p.stages[i].contraction);
    std::string why = codegen::gemm_why_illegal(shape, codegen::gemm_schedule_from(s, prefix), t);
    if (!why.empty()) return "stage " + std::to_string(i) + ": " + why;
  }
  return "";
}

double schedule::predicted_seconds(const ir::Graph& g, const Schedule& s, const target::Target& t) {
  const std::shared_ptr<const Planned> plan = planned(g, t);
  const loop::Partition& p = plan->p;
  if (p.whole_graph || !worth_staging(p)) {
    loop::RowKernel k = loop::plan_row_kernel(g);
    if (!k.ok) return codegen::loops_seconds(g, codegen::loops_options(s, t, stage_prefix(0)), t);
    return codegen::loops_seconds(g, codegen::row_stage_loops_options(s, t, stage_prefix(0)), t);
  }
  double sec = 0;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const loop::Stage& st = p.stages[i];
    const std::string prefix = stage_prefix(static_cast<int>(i));
    if (st.kind == StageKind::Row) sec += codegen::loops_seconds(st.sub, codegen::row_stage_loops_options(s, t, prefix), t);
    else if (st.kind == StageKind::Naive) sec += codegen::loops_seconds(st.sub, codegen::loops_options(s, t, prefix), t);
    else if (st.kind == StageKind::Attention)
      sec += codegen::attention_seconds(st.attention, codegen::attention_schedule_from(st.attention, s, t, prefix + "attn."), t);
    else if (st.kind == StageKind::Epilogue)
      sec += codegen::epilogue_seconds(g, st.epilogue, codegen::epilogue_schedule_from(s, prefix + "gemm."), t);
    else if (st.kind == StageKind::Copy)
      sec += codegen::copy_seconds(codegen::copy_shape_of(g, st), codegen::copy_schedule_from(s, prefix + "copy."), t);
    else {
      codegen::GemmShape shape = codegen::gemm_shape_of(st.contraction);
      sec += codegen::gemm_predicted_seconds(shape, codegen::gemm_schedule_from(s, prefix + "gemm."), t);
    }
  }
  return sec;
}

codegen::KernelSource codegen::emit_cpu(const ir::Graph& g, const schedule::Schedule& s, const target::Target& t) {
  loop::Partition p = loop::partition_graph(g);
  if (p.whole_graph || !worth_staging(p)) {
    loop::RowKernel k = loop::plan_row_kernel(g);
    if (!k.ok) return emit_loops_cpp(g, loops_options(s, t, stage_prefix(0)), t);
    return emit_loops_cpp(g, row_stage_loops_options(s, t, stage_prefix(0)), t, row_stage_unroll(s, stage_prefix(0)));
  }
  return emit_staged_cpp(g, p, s, t);
}

std::vector<codegen::StageKernel> codegen::stage_kernels(const ir::Graph& g, const schedule::Schedule& s,
                                                         const target::Target& t) {
  std::vector<StageKernel> out;
  loop::Partition p = loop::partition_graph(g);
  if (p.whole_graph || !worth_staging(p)) {
    loop::RowKernel k = loop::plan_row_kernel(g);
    tile::LoopsOptions o = k.ok ? row_stage_loops_options(s, t, stage_prefix(0)) : loops_options(s, t, stage_prefix(0));
    return {{"the whole graph (loops)", "loops", tile::lower_with(g, tile::loops_pipeline(o), g.entry)}};
  }
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const loop::Stage& st = p.stages[i];
    const std::string prefix = stage_prefix(static_cast<int>(i));
    StageKernel k{"stage " + std::to_string(i) + " (" + loop::stage_kind_name(st.kind) + ")", loop::stage_kind_name(st.kind), {}};
    switch (st.kind) {
      case StageKind::Contraction:
        k.program = tile::lower_gemm(gemm_shape_of(st.contraction), gemm_schedule_from(s, prefix + "gemm."), "gemm");
        break;
      case StageKind::Copy:
        k.program = tile::lower_copy(copy_shape_of(g, st), copy_schedule_from(s, prefix + "copy."), "copy");
        break;
      case StageKind::Attention:
        k.program = attention_kernel(g, st.attention, attention_schedule_from(st.attention, s, t, prefix + "attn."), "attention");
        // The kernel never stores the scores: the online softmax, proved
        // by the rewrite of that name at the product with V.
        k.relies_on.push_back({"online-softmax", st.results.at(0),
                               "softmax(S) . V computed block by block with a running max and rescaled sums"});
        break;
      case StageKind::Epilogue:
        k.program = epilogue_kernel(g, st.epilogue, epilogue_schedule_from(s, prefix + "gemm."), "gemm");
        break;
      case StageKind::Naive:
        k.program = tile::lower_with(st.sub, tile::loops_pipeline(loops_options(s, t, prefix)), "run");
        break;
      case StageKind::Row:
        k.program = tile::lower_with(st.sub, tile::loops_pipeline(row_stage_loops_options(s, t, prefix)), "run");
        break;
    }
    for (ir::NodeId r : st.results)
      if (std::find(g.outputs.begin(), g.outputs.end(), r) == g.outputs.end()) k.stores.push_back(r);
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> codegen::stage_programs(const ir::Graph& g, const schedule::Schedule& s,
                                                                         const target::Target& t) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const StageKernel& k : stage_kernels(g, s, t)) out.push_back({k.title, tile::print(k.program)});
  return out;
}

std::vector<std::string> codegen::cpu_compile_flags(const target::Target& t, bool shared) {
  // Name the ISA explicitly (never -march=native) so that an AVX2 target's
  // kernel cannot be auto-widened to AVX-512 by the compiler. No
  // contraction: the kernel rounds each operation as its source (and the
  // spec) writes it; GCC would otherwise fuse a * b + c into one FMA.
  std::vector<std::string> f = {"-O3", "-fopenmp", "-ffp-contract=off"};
  if (t.isa.vector_bits() == 512)
    f.insert(f.end(), {"-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx2", "-mfma"});
  else if (t.isa.vector_bits() == 256)
    f.insert(f.end(), {"-mavx2", "-mfma"});
  if (shared) f.insert(f.end(), {"-fPIC", "-shared"});
  return f;
}

}  // namespace axon
