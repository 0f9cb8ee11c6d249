// Placeholder until the loop-level lowering lands: an empty space, and the
// naive kernel for every schedule.
#include "codegen/c_like/naive_cpp.h"
#include "codegen/cpu/emit_cpu.h"

namespace axon {

schedule::Space schedule::schedule_space(const ir::Graph&, const target::Target&) { return {}; }
std::string schedule::why_illegal(const ir::Graph&, const Schedule&, const target::Target&) { return ""; }
double schedule::predicted_seconds(const ir::Graph&, const Schedule&, const target::Target&) { return 1.0; }

codegen::KernelSource codegen::emit_cpu(const ir::Graph& g, const schedule::Schedule&, const target::Target&) {
  return emit_naive_cpp(g);
}

std::vector<std::string> codegen::cpu_compile_flags(const target::Target&, bool shared) {
  std::vector<std::string> f = {"-O2", "-march=native", "-fopenmp"};
  if (shared) f.insert(f.end(), {"-fPIC", "-shared"});
  return f;
}

}  // namespace axon
