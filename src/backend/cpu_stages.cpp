#include "backend/cpu_stages.h"

#include <algorithm>
#include <functional>
#include <memory>

#include "codegen/cpu/attention.h"
#include "codegen/cpu/gemm.h"
#include "codegen/cpu/gemm_epilogue.h"
#include "codegen/cpu/gemm_prologue.h"
#include "codegen/cpu/stage_knobs.h"
#include "loop/partition.h"
#include "tile/lower_copy.h"
#include "tile/lower_gemm.h"
#include "tile/pipeline.h"
#include "tile/print.h"
#include "tile/verify.h"

namespace axon::backend {

using codegen::StageProgram;
using loop::StageKind;
using schedule::Schedule;

namespace {

// The loops kernel of `sub` (a Row stage's, with its row knobs, or a
// naive one's), as stage i of a partition or as the whole graph.
CpuStage loops_stage(const ir::Graph& sub, bool row, const loop::RowKernel& plan, const std::string& prefix,
                     const std::string& name, const target::Target& t) {
  CpuStage c;
  c.knobs = row ? codegen::row_stage_knobs(plan, t, prefix) : codegen::loops_knobs(t, prefix);
  auto options = [row, prefix, t](const Schedule& s) {
    return row ? codegen::row_stage_loops_options(s, t, prefix) : codegen::loops_options(s, t, prefix);
  };
  c.why_illegal = [](const Schedule&) { return std::string(); };
  c.seconds = [sub, options, t](const Schedule& s) { return codegen::loops_seconds(sub, options(s), t); };
  c.lower = [sub, options, row, prefix, name](const Schedule& s) {
    StageProgram p;
    p.program = tile::lower_with(sub, tile::loops_pipeline(options(s)), name);
    p.unroll = row ? codegen::row_stage_unroll(s, prefix) : 1;
    return p;
  };
  return c;
}

// A GEMM stage (Contraction or Epilogue) with its operand prologues
// (codegen/cpu/gemm_prologue.h): the kind's knobs and the prologue's, and
// legality, cost and program from the kind's functions of one GemmSchedule
// with the prologue's added.
CpuStage gemm_stage(const std::shared_ptr<const ir::Graph>& g, const loop::Stage& st, const codegen::GemmShape& shape,
                    const std::string& q, std::vector<schedule::Knob> knobs,
                    std::function<codegen::GemmSchedule(const Schedule&)> from,
                    std::function<std::string(const codegen::GemmSchedule&)> why,
                    std::function<double(const codegen::GemmSchedule&)> seconds,
                    std::function<tile::Kernel(const codegen::GemmSchedule&, const tile::GemmPrologue*)> program,
                    const target::Target& t) {
  CpuStage c;
  auto sched = [from, q](const Schedule& s) {
    codegen::GemmSchedule r = from(s);
    codegen::prologue_schedule_from(s, q, &r);
    return r;
  };
  c.knobs = codegen::with_prologue_knobs(std::move(knobs), st, q);
  c.why_illegal = [sched, why, st](const Schedule& s) {
    const codegen::GemmSchedule gs = sched(s);
    std::string w = codegen::prologue_why_illegal(st, gs);
    return w.empty() ? why(gs) : w;
  };
  c.seconds = [g, st, shape, sched, seconds, t](const Schedule& s) {
    const codegen::GemmSchedule gs = sched(s);
    return seconds(gs) + codegen::prologue_seconds(*g, st, shape, gs, t);
  };
  c.lower = [g, st, sched, program](const Schedule& s) {
    StageProgram sp;
    const tile::GemmPrologue pro = codegen::gemm_prologue(*g, st);
    sp.program = program(sched(s), codegen::has_prologue(st) ? &pro : nullptr);
    return sp;
  };
  return c;
}

// Stage i of a partition of `g`: the one switch on its kind.
CpuStage stage_of(const std::shared_ptr<const ir::Graph>& g, const loop::Stage& st, int i, const target::Target& t) {
  const std::string p = codegen::stage_prefix(i);
  CpuStage c;
  switch (st.kind) {
    case StageKind::Row:
    case StageKind::Naive: c = loops_stage(st.sub, st.kind == StageKind::Row, st.row, p, "run", t); break;
    case StageKind::Contraction: {
      const codegen::GemmShape shape = codegen::gemm_shape_of(st.contraction);
      const std::string q = p + "gemm.";
      c = gemm_stage(
          g, st, shape, q, codegen::gemm_knobs(shape, t, q), [q](const Schedule& s) { return codegen::gemm_schedule_from(s, q); },
          [shape, t](const codegen::GemmSchedule& s) { return codegen::gemm_why_illegal(shape, s, t); },
          [shape, t](const codegen::GemmSchedule& s) { return codegen::gemm_predicted_seconds(shape, s, t); },
          [shape](const codegen::GemmSchedule& s, const tile::GemmPrologue* pro) {
            tile::Kernel k = tile::lower_gemm(shape, s, "gemm", nullptr, pro);
            tile::require_well_formed(k, "the GEMM's tile program");
            return k;
          },
          t);
      break;
    }
    case StageKind::Copy: {
      const codegen::CopyShape shape = codegen::copy_shape_of(*g, st);
      const std::string q = p + "copy.";
      c.knobs = codegen::copy_knobs(shape, t, q);
      c.why_illegal = [shape, q, t](const Schedule& s) { return codegen::copy_why_illegal(shape, codegen::copy_schedule_from(s, q), t); };
      c.seconds = [shape, q, t](const Schedule& s) { return codegen::copy_seconds(shape, codegen::copy_schedule_from(s, q), t); };
      c.lower = [shape, q](const Schedule& s) {
        StageProgram sp;
        sp.program = tile::lower_copy(shape, codegen::copy_schedule_from(s, q), "copy");
        return sp;
      };
      break;
    }
    case StageKind::Attention: {
      const loop::AttentionGroup a = st.attention;
      const std::string q = p + "attn.";
      const ir::NodeId site = st.results.at(0);
      c.knobs = codegen::attention_knobs(a, t, q);
      c.why_illegal = [a, q, t](const Schedule& s) {
        return codegen::attention_why_illegal(a, codegen::attention_schedule_from(a, s, t, q));
      };
      c.seconds = [a, q, t](const Schedule& s) {
        return codegen::attention_seconds(a, codegen::attention_schedule_from(a, s, t, q), t);
      };
      c.lower = [g, a, q, t, site](const Schedule& s) {
        StageProgram sp;
        sp.program = codegen::attention_kernel(*g, a, codegen::attention_schedule_from(a, s, t, q), "attention");
        // The kernel never stores the scores: the online softmax, proved
        // by the rewrite of that name at the product with V.
        sp.relies_on.push_back({"online-softmax", site, "softmax(S) . V computed block by block with a running max and rescaled sums"});
        return sp;
      };
      break;
    }
    case StageKind::Epilogue: {
      const loop::EpilogueGroup e = st.epilogue;
      const std::string q = p + "gemm.";
      c = gemm_stage(
          g, st, codegen::gemm_shape_of(e.gemm), q, codegen::epilogue_knobs(e, t, q),
          [q](const Schedule& s) { return codegen::epilogue_schedule_from(s, q); },
          [e, t](const codegen::GemmSchedule& s) { return codegen::epilogue_why_illegal(e, s, t); },
          [g, e, t](const codegen::GemmSchedule& s) { return codegen::epilogue_seconds(*g, e, s, t); },
          [g, e](const codegen::GemmSchedule& s, const tile::GemmPrologue* pro) {
            return codegen::epilogue_kernel(*g, e, s, "gemm", pro);
          },
          t);
      break;
    }
  }
  c.kind = loop::stage_kind_name(st.kind);
  c.title = "stage " + std::to_string(i) + " (" + c.kind + ")";
  // The stage's place in the kernel: the values bound to its buffers.
  const std::vector<ir::NodeId> inputs = st.inputs, results = st.results;
  const std::string title = c.title, kind = c.kind;
  c.lower = [lower = c.lower, inputs, results, title, kind](const Schedule& s) {
    StageProgram sp = lower(s);
    sp.title = title, sp.kind = kind, sp.inputs = inputs, sp.results = results;
    return sp;
  };
  return c;
}

std::vector<CpuStage> stages_of(const ir::Graph& g, const target::Target& t) {
  const loop::Partition p = loop::partition_graph(g);
  const bool staged = !p.whole_graph && std::any_of(p.stages.begin(), p.stages.end(), [](const loop::Stage& s) {
    return s.kind != StageKind::Naive;
  });
  if (!staged) {
    // One kernel of the whole graph: a row stage's, or the loops kernel.
    const loop::RowKernel plan = loop::plan_row_kernel(g);
    CpuStage c = loops_stage(g, plan.ok, plan, codegen::stage_prefix(0), g.entry, t);
    c.title = "the whole graph (loops)", c.kind = "loops";
    c.lower = [lower = c.lower](const Schedule& s) {
      StageProgram sp = lower(s);
      sp.title = "the whole graph (loops)", sp.kind = "loops", sp.whole_graph = true;
      return sp;
    };
    return {std::move(c)};
  }
  auto gp = std::make_shared<const ir::Graph>(g);
  std::vector<CpuStage> out;
  for (size_t i = 0; i < p.stages.size(); ++i) out.push_back(stage_of(gp, p.stages[i], static_cast<int>(i), t));
  return out;
}

// The same graph, node for node: what partition_graph reads.
bool same_graph(const ir::Graph& a, const ir::Graph& b) {
  if (a.entry != b.entry || a.outputs != b.outputs || a.nodes() != b.nodes() || a.params.size() != b.params.size())
    return false;
  for (size_t i = 0; i < a.params.size(); ++i)
    if (a.params[i].name != b.params[i].name || !(a.params[i].type == b.params[i].type)) return false;
  return true;
}

std::string target_key(const target::Target& t) {
  const target::Peaks& k = t.peaks;
  return t.fingerprint() + ";" + std::to_string(k.fma_gflops_1t) + "/" + std::to_string(k.fma_gflops_all) + "/" +
         std::to_string(k.stream_gbs_1t) + "/" + std::to_string(k.stream_gbs_all);
}

// The stages of the last graph and target this thread asked about, and
// their space: a search asks why_illegal and predicted_seconds of tens of
// thousands of schedules of one graph (search::autotune's ranking and
// climbs), and partitioning the graph and listing its knobs again each
// time was most of their cost. The target is told apart by its
// fingerprint (ISA, cores, caches) and its peaks.
struct Planned {
  std::vector<CpuStage> stages;
  schedule::Space space;
};

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
    plan->stages = stages_of(g, t);
    for (const CpuStage& c : plan->stages) plan->space.knobs.insert(plan->space.knobs.end(), c.knobs.begin(), c.knobs.end());
    last.g = g;
    last.target = std::move(key);
    last.plan = std::move(plan);
  }
  return last.plan;
}

}  // namespace

std::vector<CpuStage> cpu_stages(const ir::Graph& g, const target::Target& t) { return planned(g, t)->stages; }

std::vector<StageProgram> lower_stages(const ir::Graph& g, const Schedule& s, const target::Target& t) {
  const std::shared_ptr<const Planned> plan = planned(g, t);
  std::vector<StageProgram> out;
  for (const CpuStage& c : plan->stages) out.push_back(c.lower(s));
  return out;
}

codegen::KernelSource emit_cpu(const ir::Graph& g, const Schedule& s, const target::Target& t) {
  return codegen::print_stage_programs(g, lower_stages(g, s, t), t);
}

std::vector<std::pair<std::string, std::string>> stage_programs(const ir::Graph& g, const Schedule& s, const target::Target& t) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const StageProgram& p : lower_stages(g, s, t)) out.push_back({p.title, tile::print(p.program)});
  return out;
}

}  // namespace axon::backend

namespace axon {

schedule::Space schedule::schedule_space(const ir::Graph& g, const target::Target& t) {
  return backend::planned(g, t)->space;
}

std::string schedule::why_illegal(const ir::Graph& g, const Schedule& s, const target::Target& t) {
  const std::shared_ptr<const backend::Planned> plan = backend::planned(g, t);
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
  // On one thread no reduction is split: loops.split 0 would be 1 again.
  for (const auto& [name, v] : s)
    if (name.size() > 11 && name.compare(name.size() - 11, 11, "loops.split") == 0 && v == 0) {
      auto threads = s.find(name.substr(0, name.size() - 5) + "threads");
      if (threads != s.end() && threads->second <= 1) return "knob " + name + " = 0 on one thread: the kernel of loops.split 1";
    }
  // Without vectors nothing is streamed: loops.nt_store 1 would be 0 again.
  for (const auto& [name, v] : s)
    if (name.size() > 14 && name.compare(name.size() - 14, 14, "loops.nt_store") == 0 && v != 0) {
      auto vec = s.find(name.substr(0, name.size() - 8) + "vectorize");
      if (vec != s.end() && vec->second == 0) return "knob " + name + " = 1 without vectors: the kernel of loops.nt_store 0";
    }
  if (plan->stages.size() == 1) return plan->stages[0].why_illegal(s);
  for (size_t i = 0; i < plan->stages.size(); ++i) {
    std::string why = plan->stages[i].why_illegal(s);
    if (!why.empty()) return "stage " + std::to_string(i) + ": " + why;
  }
  return "";
}

double schedule::predicted_seconds(const ir::Graph& g, const Schedule& s, const target::Target& t) {
  double sec = 0;
  for (const backend::CpuStage& c : backend::planned(g, t)->stages) sec += c.seconds(s);
  return sec;
}

}  // namespace axon
