// kernel_report: report.json's "kernel" section: the winner's stages, the
// temporaries each allocates and the values between them (so that, for
// example, an attention kernel that stores its S x S scores shows), and for
// each identity a lowering applies on its own (the online softmax of fused
// attention) the proof of that rewrite on the winner's graph.
//
/// Ensures: {"stages": [{"kind", "temporaries": [{"name",
/// "scope", "elements", "bytes"}], "proofs": [{"rule", "site", "why",
/// "status", "solver", "solver_ms", "queries", "reason"?, "counterexample"?}]}],
/// "between_stages": [...], "partition": [{"kind", "what", "why": [...]}]}
/// (partition: the stages of the winner's graph and why a stage is loops or
/// a product keeps its own stage, rewrite/explain.h's stages_json);
/// a proof's status is "proved" only when Z3 proved the rewrite at that
/// site over every size of the graph's shape pattern, else what it said
/// (refuted, unknown, or "no such rewrite here").
#pragma once

#include <nlohmann/json.hpp>

#include "codegen/kernel_info.h"
#include "ir/graph.h"

namespace axon::optimize {

nlohmann::json kernel_report(const ir::Graph& g, const codegen::KernelInfo& info);

}  // namespace axon::optimize
