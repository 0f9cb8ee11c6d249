// emit_cpu and the schedule space of the CPU code generator.
//
// A graph in the row-kernel form (loop/row_kernel.h: elementwise chains and
// row reductions with their prologues and epilogues) becomes one fused loop
// nest with knobs k0.vec_axis, k0.threads, k0.row_block, k0.unroll and
// k0.nt_store. Every other graph (contractions, transposes, slices, ...)
// falls back to the naive kernel, one loop nest per node, and has no knobs.
#include "codegen/cpu/emit_cpu.h"

#include <algorithm>

#include "codegen/c_like/naive_cpp.h"
#include "codegen/cpu/row_kernel_cpp.h"
#include "loop/row_kernel.h"

namespace axon {

namespace {

bool has_row_outputs(const loop::RowKernel& k) { return !k.row_outputs.empty(); }

std::vector<int64_t> thread_values(const target::Target& t) {
  std::vector<int64_t> v = {std::max(1, t.cores)};
  for (int i = 1; i < t.cores; ++i) v.push_back(i);
  return v;
}

codegen::RowKernelOptions options_from(const schedule::Schedule& s, const target::Target& t) {
  auto get = [&](const char* name, int64_t dflt) {
    auto it = s.find(name);
    return it == s.end() ? dflt : it->second;
  };
  codegen::RowKernelOptions o;
  o.vector_bits = get("k0.vec_axis", 1) ? t.isa.vector_bits() : 0;
  o.threads = static_cast<int>(get("k0.threads", std::max(1, t.cores)));
  o.row_block = static_cast<int>(get("k0.row_block", 0));
  o.unroll = static_cast<int>(get("k0.unroll", 1));
  o.nt_store = get("k0.nt_store", 0) != 0;
  return o;
}

}  // namespace

schedule::Space schedule::schedule_space(const ir::Graph& g, const target::Target& t) {
  Space sp;
  loop::RowKernel k = loop::plan_row_kernel(g);
  if (!k.ok) return sp;
  if (t.isa.vector_bits() > 0)
    sp.knobs.push_back({"k0.vec_axis", {1, 0}, "1: vectorise the row (last) axis; 0: scalar code"});
  else
    sp.knobs.push_back({"k0.vec_axis", {0}, "scalar code (the target has no vector ISA)"});
  sp.knobs.push_back({"k0.threads", thread_values(t), "OpenMP threads over the row loop"});
  sp.knobs.push_back({"k0.row_block", {0, 1, 8, 64}, "rows per OpenMP chunk (0: even static split)"});
  sp.knobs.push_back({"k0.unroll", {2, 1, 4}, "unroll factor of each pass's vector loop"});
  if (has_row_outputs(k)) sp.knobs.push_back({"k0.nt_store", {0, 1}, "1: streaming (non-temporal) stores of row outputs"});
  return sp;
}

std::string schedule::why_illegal(const ir::Graph& g, const Schedule& s, const target::Target& t) {
  Space sp = schedule_space(g, t);
  for (const Knob& k : sp.knobs) {
    auto it = s.find(k.name);
    if (it == s.end()) return "knob " + k.name + " has no value";
    if (std::find(k.values.begin(), k.values.end(), it->second) == k.values.end())
      return "knob " + k.name + " = " + std::to_string(it->second) + " is not one of its legal values";
  }
  for (const auto& [name, v] : s)
    if (!sp.find(name)) return "knob " + name + " is not in this graph's space";
  auto th = s.find("k0.threads");
  if (th != s.end() && th->second > std::max(1, t.cores)) return "more threads than cores";
  return "";
}

double schedule::predicted_seconds(const ir::Graph& g, const Schedule& s, const target::Target& t) {
  loop::RowKernel k = loop::plan_row_kernel(g);
  if (!k.ok) return 1.0;  // the naive kernel: unranked
  codegen::RowKernelOptions o = options_from(s, t);
  const int cores = std::max(1, t.cores);
  const double bw_1t = t.peaks.stream_gbs_1t > 0 ? t.peaks.stream_gbs_1t * 1e9 : 12e9;
  const double bw_all = t.peaks.stream_gbs_all > 0 ? t.peaks.stream_gbs_all * 1e9 : 20e9;
  const double bw = std::min(bw_all, bw_1t * o.threads);
  const double fl_1t = t.peaks.fma_gflops_1t > 0 ? t.peaks.fma_gflops_1t * 1e9 : 50e9;
  const int lanes = o.vector_bits > 0 ? o.vector_bits / 32 : 1;
  // One op per element per pass counts as one lane of an FMA (half its flops).
  const double flops = static_cast<double>(k.rows * k.cols) * static_cast<double>(k.ops_per_element + 1) *
                       std::max(1, k.passes()) * 2.0;
  const double peak = fl_1t * o.threads * lanes / 16.0;
  double sec = std::max(static_cast<double>(k.min_bytes) / bw, flops / peak);
  // Passes after the first re-read the row from L2 (~4x the stream bandwidth).
  sec += std::max(0, k.passes() - 1) * static_cast<double>(k.rows * k.cols * 4) / (4 * bw);
  sec += o.threads > 1 ? 3e-6 : 0;  // fork/join of the parallel region
  if (o.row_block == 1) sec += k.rows * 2e-8;
  if (o.nt_store && k.min_bytes < 8 * (int64_t{1} << 20)) sec *= 1.2;  // streams help only past the caches
  if (o.unroll == 4) sec *= 1.01;
  (void)cores;
  return sec;
}

codegen::KernelSource codegen::emit_cpu(const ir::Graph& g, const schedule::Schedule& s, const target::Target& t) {
  loop::RowKernel k = loop::plan_row_kernel(g);
  if (!k.ok) return emit_naive_cpp(g);
  return emit_row_kernel_cpp(g, k, options_from(s, t));
}

std::vector<std::string> codegen::cpu_compile_flags(const target::Target& t, bool shared) {
  // Name the ISA explicitly (never -march=native) so that an AVX2 target's
  // kernel cannot be auto-widened to AVX-512 by the compiler.
  std::vector<std::string> f = {"-O3", "-fopenmp"};
  if (t.isa.vector_bits() == 512)
    f.insert(f.end(), {"-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx2", "-mfma"});
  else if (t.isa.vector_bits() == 256)
    f.insert(f.end(), {"-mavx2", "-mfma"});
  if (shared) f.insert(f.end(), {"-fPIC", "-shared"});
  return f;
}

}  // namespace axon
