// The report behind `axon explain`: every rewrite explore() found
// applicable on a graph or on one of its proved variants with its proof status (proved + solver ms, or refused +
// counterexample), the cost before and after, and the variant explore()
// chooses. As JSON (schema below) or as text.
//
// The library rules come from options.library, or when that is empty from
// default_library_path().
//
// JSON: {"entry", "cost": {"flops", "bytes"}, "library": {"path", "rules_used"},
//        "rewrites": [{"kind", "detail", "status": "proved"|"refuted"|"unknown",
//                      "solver_ms", "queries", "counterexample", "reason",
//                      "cost_before": {..}, "cost_after": {..}}],
//        "chosen": {"steps": [{"kind", "detail", "solver_ms"}], "cost": {..}, "ir",
//                   "stages": stages_json(the chosen graph)},
//        "original_stages": stages_json(g) (when the chosen variant is a rewrite),
//        "explore": {"stop", "variants", "iterations", "proofs"}}
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "ir/graph.h"
#include "rewrite/rewrite.h"

namespace axon::rewrite {

/// The stages the code generator cuts `g` into (loop/describe.h), as
/// [{"kind", "what", "why": [...]}]: "chosen.stages" here and report.json's
/// "kernel.partition".
nlohmann::json stages_json(const ir::Graph& g);

nlohmann::json explain_json(const ir::Graph& g, const ExploreOptions& o = {});
std::string explain_text(const nlohmann::json& report);

}  // namespace axon::rewrite
