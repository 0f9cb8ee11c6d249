#include "optimize/kernel_report.h"

#include <cctype>

#include "rewrite/explain.h"
#include "rewrite/rewrite.h"

namespace axon::optimize {

namespace {

using nlohmann::json;

json temporaries_json(const std::vector<codegen::Temporary>& ts) {
  json a = json::array();
  for (const codegen::Temporary& t : ts)
    a.push_back({{"name", t.name}, {"scope", t.scope}, {"elements", t.elements}, {"bytes", t.bytes}});
  return a;
}

json proof_json(const ir::Graph& g, const codegen::Reliance& r) {
  json j = {{"rule", r.rule}, {"site", "%" + std::to_string(r.site)}, {"why", r.why}, {"solver", "z3"}};
  for (const rewrite::Move& m : rewrite::candidate_moves(g)) {
    if (m.kind != r.rule || m.site.empty() || m.site[0] != r.site) continue;
    verify::smt::ProofResult p = rewrite::prove_move(g, m);
    std::string st = verify::smt::proof_status_name(p.status);
    for (char& c : st) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    j["status"] = st;
    j["solver_ms"] = p.solver_ms;
    j["queries"] = p.queries;
    j["over"] = "every size of the parameters' shape pattern, real inputs";
    if (!p.reason.empty()) j["reason"] = p.reason;
    if (!p.counterexample.empty()) j["counterexample"] = p.counterexample;
    return j;
  }
  j["status"] = "no such rewrite here";
  return j;
}

}  // namespace

json kernel_report(const ir::Graph& g, const codegen::KernelInfo& info) {
  json stages = json::array();
  for (const codegen::StageInfo& s : info.stages) {
    json st = {{"kind", s.kind}, {"temporaries", temporaries_json(s.temporaries)}};
    json proofs = json::array();
    for (const codegen::Reliance& r : s.relies_on) proofs.push_back(proof_json(g, r));
    if (!proofs.empty()) st["proofs"] = proofs;
    stages.push_back(st);
  }
  return {{"stages", stages}, {"between_stages", temporaries_json(info.between_stages)},
          {"partition", rewrite::stages_json(g)}};
}

}  // namespace axon::optimize
