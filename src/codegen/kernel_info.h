// KernelInfo: what a kernel of the optimising code generator is made of, for
// the report: its stages, the temporaries each one allocates, the values
// that pass between stages through memory, and the proved identities a
// lowering applies on its own (the online softmax of fused attention), so
// that report.json can cite their proofs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace axon::codegen {

struct Temporary {
  std::string name;
  std::string scope;     // "memory" (once per call) or "scratch" (once per thread)
  int64_t elements = 0;  // per allocation
  int64_t bytes = 0;
};

/// A rewrite (by its rule name in rewrite/rewrite.h) that a lowering
/// relies on, at a node of the graph it was given.
struct Reliance {
  std::string rule;
  ir::NodeId site = -1;
  std::string why;
};

struct StageInfo {
  std::string kind;                    // loop::stage_kind_name, or "loops" for a whole-graph kernel
  std::vector<Temporary> temporaries;  // allocated by its kernel
  std::vector<Reliance> relies_on;
};

struct KernelInfo {
  std::vector<StageInfo> stages;
  std::vector<Temporary> between_stages;  // stage results that are not outputs, stored in memory
};

}  // namespace axon::codegen
