// print_stage_programs: a graph's stage programs as one kernel.cpp, through
// the tile printer (one program, or a unit of several).
#include "codegen/cpu/emit_cpu.h"

#include <algorithm>
#include <map>

#include "codegen/c_like/kernel_abi.h"
#include "codegen/c_like/tile_cpp.h"
#include "codegen/cpu/stage_knobs.h"
#include "ir/printer.h"
#include "support/diagnostic.h"

namespace axon::codegen {

KernelSource print_stage_programs(const ir::Graph& g, const std::vector<StageProgram>& stages, const target::Target& t) {
  AXON_CHECK(!stages.empty()) << "a kernel of no stage";
  if (stages.size() == 1 && stages[0].whole_graph) {
    TileCppOptions o = tile_printer_options(t);
    o.unroll = stages[0].unroll;
    return print_tile_cpp(stages[0].program, g, "a fused loop kernel", o);
  }
  const KernelAbi abi = make_kernel_abi(g);
  // The buffer of every value a stage reads or writes: parameters, outputs
  // written in place by the stage computing them, the rest temporaries.
  std::map<ir::NodeId, std::string> buf;
  for (ir::NodeId i = 0; i < g.size(); ++i)
    if (g[i].op == ir::Op::Param) buf[i] = abi.param_names.at(static_cast<size_t>(g[i].attrs.ints[0]));
  for (size_t k = 0; k < g.outputs.size(); ++k)
    if (!buf.count(g.outputs[k])) buf[g.outputs[k]] = abi.output_names[k];
  std::vector<UnitBuffer> temps;
  for (const StageProgram& st : stages)
    for (ir::NodeId r : st.results)
      if (!buf.count(r)) {
        buf[r] = "t" + std::to_string(r);
        temps.push_back({buf[r], g[r].type.dtype, g[r].type.numel()});
      }
  std::vector<UnitKernel> kernels;
  for (size_t i = 0; i < stages.size(); ++i) {
    const StageProgram& st = stages[i];
    AXON_CHECK(!st.whole_graph && !st.results.empty()) << st.title << ": a stage with no results";
    UnitKernel u;
    u.program = st.program;
    u.ns = "axon_s" + std::to_string(i);
    u.title = st.title + ": " + print_node(g, st.results.back());
    u.options = tile_printer_options(t);
    u.options.unroll = st.unroll;
    for (ir::NodeId in : st.inputs) u.args.push_back(buf.at(in));
    for (ir::NodeId r : st.results) u.args.push_back(buf.at(r));
    kernels.push_back(std::move(u));
  }
  std::vector<UnitCopy> copies;  // outputs that no stage wrote in place: parameters and repeats
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const ir::NodeId o = g.outputs[k];
    if (buf.at(o) == abi.output_names[k]) continue;
    copies.push_back({abi.output_names[k], buf.at(o), g[o].type.numel() * ir::dtype_bytes(g[o].type.dtype)});
  }
  return print_tile_unit(abi, kernels, temps, copies, "a staged kernel");
}

std::vector<std::string> cpu_compile_flags(const target::Target& t, bool shared) {
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

}  // namespace axon::codegen
