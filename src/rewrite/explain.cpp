// explain.h: runs discover() and explore() and lays out their findings.
#include "rewrite/explain.h"

#include <cstdio>
#include <sstream>

#include "ir/printer.h"
#include "loop/describe.h"
#include "loop/partition.h"

namespace axon::rewrite {
namespace {
nlohmann::json cost_json(const Cost& c) { return {{"flops", c.flops}, {"bytes", c.bytes}}; }

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}
std::string cost_str(const nlohmann::json& c) {
  return fmt(c["flops"].get<double>()) + " flops, " + fmt(c["bytes"].get<double>()) + " bytes";
}
}  // namespace

nlohmann::json stages_json(const ir::Graph& g) {
  nlohmann::json out = nlohmann::json::array();
  try {
    for (const loop::StageDescription& d : loop::describe_stages(g, loop::partition_graph(g)))
      out.push_back({{"kind", d.kind}, {"what", d.what}, {"why", d.why}});
  } catch (const std::exception& e) {  // the report goes on without them
    out = nlohmann::json::array({{{"kind", "unknown"}, {"what", "the stages could not be planned"}, {"why", {e.what()}}}});
  }
  return out;
}

nlohmann::json explain_json(const ir::Graph& g, const ExploreOptions& options) {
  ExploreOptions o = options;
  std::string lib_path;
  if (o.library.empty()) {
    lib_path = default_library_path();
    if (!lib_path.empty()) o.library = load_library(lib_path);
  }
  nlohmann::json j;
  j["library"] = {{"path", lib_path}, {"rules_used", o.library.size()}};
  j["entry"] = g.entry;
  j["cost"] = cost_json(cost(g));
  j["rewrites"] = nlohmann::json::array();
  ExploreResult e = explore(g, o);
  for (const Candidate& c : e.tried) {
    nlohmann::json r;
    r["kind"] = c.move.kind;
    r["detail"] = c.move.detail;
    std::string st = verify::smt::proof_status_name(c.proof.status);
    for (char& ch : st) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    r["status"] = st;
    r["solver_ms"] = c.proof.solver_ms;
    r["queries"] = c.proof.queries;
    r["counterexample"] = c.proof.counterexample;
    r["reason"] = c.proof.reason;
    r["cost_before"] = cost_json(c.before);
    r["cost_after"] = cost_json(c.after_cost);
    j["rewrites"].push_back(r);
  }
  const RewrittenGraph& best = e.best.at(0);
  nlohmann::json ch;
  ch["steps"] = nlohmann::json::array();
  for (const AppliedRewrite& s : best.steps)
    ch["steps"].push_back({{"kind", s.move.kind}, {"detail", s.move.detail}, {"solver_ms", s.proof.solver_ms}});
  ch["cost"] = cost_json(best.cost);
  ch["ir"] = ir::print(best.graph);
  ch["stages"] = stages_json(best.graph);
  j["chosen"] = ch;
  // optimize searches the original graph too, whose stages may differ
  // (attention's softmax @ V is one stage there, while the cheaper variant
  // by this cost model divides after the product).
  if (!best.steps.empty()) j["original_stages"] = stages_json(g);
  j["explore"] = {{"stop", stop_reason_name(e.stop)}, {"variants", e.variants}, {"iterations", e.iterations},
                  {"proofs", e.proofs}};
  return j;
}

std::string explain_text(const nlohmann::json& j) {
  std::ostringstream s;
  s << j["entry"].get<std::string>() << ": " << cost_str(j["cost"]) << "\n";
  s << j["rewrites"].size() << " rewrite(s) applicable:\n";
  for (const auto& r : j["rewrites"]) {
    s << "  [" << r["status"].get<std::string>() << "] " << r["kind"].get<std::string>() << ": "
      << r["detail"].get<std::string>() << "\n";
    if (r["status"] == "proved")
      s << "      proved in " << fmt(r["solver_ms"].get<double>()) << " ms";
    else if (!r["counterexample"].get<std::string>().empty())
      s << "      counterexample: " << r["counterexample"].get<std::string>();
    else
      s << "      " << r["reason"].get<std::string>();
    s << "\n      cost " << cost_str(r["cost_before"]) << " -> " << cost_str(r["cost_after"]) << "\n";
  }
  const auto& ch = j["chosen"];
  s << "chosen variant (" << cost_str(ch["cost"]) << "), " << ch["steps"].size() << " step(s):\n";
  for (const auto& st : ch["steps"]) s << "  " << st["kind"].get<std::string>() << ": " << st["detail"].get<std::string>() << "\n";
  s << "explore stopped: " << j["explore"]["stop"].get<std::string>() << " (" << j["explore"]["variants"]
    << " variants, " << j["explore"]["iterations"] << " iterations, " << j["explore"]["proofs"] << " proofs)\n";
  s << "stages of the chosen variant:\n";
  for (const auto& st : ch["stages"]) {
    s << "  " << st["kind"].get<std::string>() << ": " << st["what"].get<std::string>() << "\n";
    for (const auto& w : st["why"]) s << "      " << w.get<std::string>() << "\n";
  }
  if (j.contains("original_stages")) {
    s << "stages of the original graph (optimize searches it too):\n";
    for (const auto& st : j["original_stages"]) {
      s << "  " << st["kind"].get<std::string>() << ": " << st["what"].get<std::string>() << "\n";
      for (const auto& w : st["why"]) s << "      " << w.get<std::string>() << "\n";
    }
  }
  s << ch["ir"].get<std::string>();
  return s.str();
}

}  // namespace axon::rewrite
