// The cost model and the exploration of variants (rewrite.h): a graph of
// variants keyed by structural hash, grown breadth-first by proved moves.
#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "loop/row_kernel.h"
#include "rewrite/rewrite.h"

namespace axon::rewrite {

namespace {
double elements(const ir::Shape& s) {
  double n = 1;
  for (int64_t d : s) n *= static_cast<double>(d);
  return n;
}
}  // namespace

Cost cost(const ir::Graph& g) {
  Cost c;
  for (const ir::Node& n : g.nodes()) {
    switch (n.op) {
      case ir::Op::Param:
      case ir::Op::Constant:
      case ir::Op::Broadcast:
      case ir::Op::Reshape:
        continue;
      default:
        break;
    }
    double read = 0;
    for (ir::NodeId a : n.args) read += elements(g[a].type.shape);
    double written = elements(n.type.shape);
    c.bytes += 4 * (read + written);
    if (n.op == ir::Op::Einsum) {
      ir::EinsumSpec s;
      ir::parse_einsum(n.attrs.text, &s);
      std::map<char, int64_t> size;
      for (size_t i = 0; i < s.a.size(); ++i) size[s.a[i]] = g[n.args[0]].type.shape[i];
      for (size_t i = 0; i < s.b.size(); ++i) size[s.b[i]] = g[n.args[1]].type.shape[i];
      double f = 2;
      for (auto& [l, d] : size) f *= static_cast<double>(d);
      c.flops += f;
    } else if (ir::is_elementwise(n.op)) {
      c.flops += written * loop::op_weight(n.op);
    } else if (ir::is_reduction(n.op)) {
      c.flops += elements(g[n.args[0]].type.shape);
    }
  }
  return c;
}

double cost_score(const Cost& c) { return c.flops + 4 * c.bytes; }

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::Saturated: return "saturated";
    case StopReason::VariantBudget: return "variant-budget";
    case StopReason::IterationBudget: return "iteration-budget";
    case StopReason::TimeBudget: return "time-budget";
  }
  return "?";
}

ExploreResult explore(const ir::Graph& g0, const ExploreOptions& o) {
  auto start = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  ExploreResult res;
  std::vector<RewrittenGraph> variants;
  std::unordered_map<uint64_t, int> seen;
  ir::Graph root = ir::compact(g0);
  variants.push_back({root, {}, cost(root)});
  seen[root.structural_hash()] = 0;
  std::vector<int> frontier = {0};
  res.stop = StopReason::Saturated;
  bool stopped = false;
  while (!frontier.empty() && !stopped) {
    if (res.iterations >= o.max_iterations) {
      res.stop = StopReason::IterationBudget;
      break;
    }
    ++res.iterations;
    std::vector<int> next;
    for (int vi : frontier) {
      std::vector<Move> moves = candidate_moves(variants[vi].graph);
      if (!o.library.empty())
        for (Move& m : library_moves(variants[vi].graph, o.library)) moves.push_back(std::move(m));
      for (const Move& m : moves) {
        if (seconds() > o.max_seconds) {
          res.stop = StopReason::TimeBudget;
          stopped = true;
          break;
        }
        if (static_cast<int>(variants.size()) >= o.max_variants) {
          res.stop = StopReason::VariantBudget;
          stopped = true;
          break;
        }
        std::optional<ir::Graph> after = apply_move(variants[vi].graph, m);
        if (!after) continue;
        uint64_t h = after->structural_hash();
        if (seen.count(h)) continue;
        seen[h] = -1;  // tried; a refused candidate is not retried
        ++res.proofs;
        verify::smt::ProofResult p = prove_move(variants[vi].graph, m, o.prove);
        res.tried.push_back({m, {}, p, variants[vi].cost, cost(*after)});
        if (p.status != verify::smt::ProofStatus::Proved) continue;
        RewrittenGraph v{*after, variants[vi].steps, cost(*after)};
        v.steps.push_back({m, p});
        seen[h] = static_cast<int>(variants.size());
        variants.push_back(std::move(v));
        next.push_back(static_cast<int>(variants.size()) - 1);
      }
      if (stopped) break;
    }
    frontier = std::move(next);
  }
  res.variants = static_cast<int>(variants.size());
  std::stable_sort(variants.begin(), variants.end(), [](const RewrittenGraph& a, const RewrittenGraph& b) {
    return cost_score(a.cost) < cost_score(b.cost);
  });
  if (static_cast<int>(variants.size()) > o.k) variants.resize(std::max(o.k, 1));
  res.best = std::move(variants);
  return res;
}

}  // namespace axon::rewrite
