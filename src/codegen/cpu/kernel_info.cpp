#include "codegen/cpu/kernel_info.h"

#include <algorithm>

namespace axon::codegen {

KernelInfo cpu_kernel_info(const ir::Graph& g, const std::vector<StageProgram>& stages) {
  KernelInfo info;
  for (const StageProgram& k : stages) {
    StageInfo st;
    st.kind = k.kind;
    st.relies_on = k.relies_on;
    for (const tile::Buffer& b : k.program.buffers) {
      if (b.scope != tile::Scope::Memory && b.scope != tile::Scope::Scratch) continue;
      st.temporaries.push_back({b.name, tile::scope_name(b.scope), b.numel(), b.numel() * ir::dtype_bytes(b.dtype)});
    }
    for (ir::NodeId r : k.results) {
      if (std::find(g.outputs.begin(), g.outputs.end(), r) != g.outputs.end()) continue;
      info.between_stages.push_back({"%" + std::to_string(r), "memory", g[r].type.numel(),
                                     g[r].type.numel() * ir::dtype_bytes(g[r].type.dtype)});
    }
    info.stages.push_back(std::move(st));
  }
  return info;
}

}  // namespace axon::codegen
