// sum-into-contraction and reassociate-chain (contraction.h): the two moves
// on einsums that change the FLOP count by an order of the size, not by a
// constant factor.
#include "rewrite/contraction.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "support/diagnostic.h"

namespace axon::rewrite::detail {

using ir::Graph;
using ir::Node;
using ir::NodeId;
using ir::Op;

Graph rebuild(const Graph& g, const std::map<NodeId, Builder>& replace) {
  Graph ng;
  ng.entry = g.entry;
  ng.params = g.params;
  std::vector<NodeId> map(g.size(), -1);
  for (NodeId i = 0; i < g.size(); ++i) {
    auto r = replace.find(i);
    if (r != replace.end()) {
      map[i] = r->second(ng, map);
      continue;
    }
    Node n = g[i];
    for (NodeId& a : n.args) a = map[a];
    map[i] = ng.make(std::move(n));
  }
  for (NodeId o : g.outputs) ng.outputs.push_back(map[o]);
  return ir::compact(ng);
}

namespace {

bool distinct(const std::string& s) { return std::set<char>(s.begin(), s.end()).size() == s.size(); }

// The spec of einsum `id` when no operand repeats a label (no diagonal).
std::optional<ir::EinsumSpec> plain_spec(const Graph& g, NodeId id) {
  if (g[id].op != Op::Einsum) return std::nullopt;
  ir::EinsumSpec s;
  if (!ir::parse_einsum(g[id].attrs.text, &s) || !distinct(s.a) || !distinct(s.b)) return std::nullopt;
  return s;
}

std::string name(const Graph& g, NodeId id) {
  const Node& n = g[id];
  if (n.op == Op::Param) return g.params.at(n.attrs.ints.at(0)).name;
  return "%" + std::to_string(id) + "(" + ir::op_name(n.op) + ")";
}

std::string without(const std::string& s, const std::string& drop) {
  std::string r;
  for (char c : s)
    if (drop.find(c) == std::string::npos) r += c;
  return r;
}

// The positions in `s` of the labels in `labels`, ascending.
std::vector<int64_t> positions(const std::string& s, const std::string& labels) {
  std::vector<int64_t> p;
  for (size_t i = 0; i < s.size(); ++i)
    if (labels.find(s[i]) != std::string::npos) p.push_back(static_cast<int64_t>(i));
  return p;
}

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

// ---- sum-into-contraction

struct SumPlan {
  NodeId e;
  ir::EinsumSpec s;
  std::string moved;  // summed labels that one operand carries: summed there first
  std::string kept;   // summed labels both operands carry: summed after the einsum
};

std::optional<SumPlan> plan_sum(const Graph& g, NodeId r) {
  if (g[r].op != Op::ReduceSum || !ir::is_float(g[r].type.dtype)) return std::nullopt;
  NodeId e = g[r].args[0];
  std::optional<ir::EinsumSpec> s = plain_spec(g, e);
  if (!s) return std::nullopt;
  SumPlan p{e, *s, "", ""};
  for (int64_t ax : g[r].attrs.ints) {
    char l = s->out.at(static_cast<size_t>(ax));
    bool in_a = s->a.find(l) != std::string::npos, in_b = s->b.find(l) != std::string::npos;
    (in_a != in_b ? p.moved : p.kept) += l;
  }
  if (p.moved.empty()) return std::nullopt;
  return p;
}


// ---- expand-square-of-difference

struct SquarePlan {
  NodeId p, q;              // the sources of the two broadcast sides of the difference
  std::vector<int64_t> k;   // the summed axes
};

std::optional<SquarePlan> plan_square(const Graph& g, NodeId r) {
  if (g[r].op != Op::ReduceSum || !ir::is_float(g[r].type.dtype)) return std::nullopt;
  NodeId sq = g[r].args[0];
  if (g[sq].op != Op::Mul || g[sq].args[0] != g[sq].args[1]) return std::nullopt;
  NodeId d = g[sq].args[0];
  if (g[d].op != Op::Sub) return std::nullopt;
  auto source = [&](NodeId x) { return g[x].op == Op::Broadcast ? g[x].args[0] : x; };
  SquarePlan plan{source(g[d].args[0]), source(g[d].args[1]), g[r].attrs.ints};
  const ir::Shape &full = g[d].type.shape, &ps = g[plan.p].type.shape, &qs = g[plan.q].type.shape;
  if (ps.size() != full.size() || qs.size() != full.size()) return std::nullopt;
  bool pairwise = false;
  for (size_t a = 0; a < full.size(); ++a) {
    bool summed = std::find(plan.k.begin(), plan.k.end(), static_cast<int64_t>(a)) != plan.k.end();
    // A summed axis must be the operands' own (not broadcast along it).
    if (summed && (ps[a] != full[a] || qs[a] != full[a])) return std::nullopt;
    if (!summed && full[a] > 1 && (ps[a] == 1 || qs[a] == 1)) pairwise = true;
  }
  if (!pairwise) return std::nullopt;
  return plan;
}

// ---- reassociate-chain

// A tree of einsums read as one contraction: its leaves with their labels
// (global label numbers) and the root's output labels 0..rank-1.
struct Chain {
  std::vector<NodeId> leaves;
  std::vector<std::vector<int>> labels;
  std::vector<int64_t> size;  // by label number
  double flops = 0;           // of the einsums as they are
};

std::vector<int> count_uses(const Graph& g, const std::vector<bool>& live) {
  std::vector<int> uses(g.size(), 0);
  for (NodeId i = 0; i < g.size(); ++i)
    if (live[i])
      for (NodeId a : g[i].args) ++uses[a];
  for (NodeId o : g.outputs) uses[o] += 2;  // an output is never folded into its consumer
  return uses;
}

std::vector<bool> live_nodes(const Graph& g) {
  std::vector<bool> live(g.size(), false);
  for (NodeId o : g.outputs) live[o] = true;
  for (NodeId i = g.size() - 1; i >= 0; --i)
    if (live[i])
      for (NodeId a : g[i].args) live[a] = true;
  return live;
}

Chain collect(const Graph& g, NodeId root, const std::vector<int>& uses) {
  Chain c;
  std::function<void(NodeId, const std::vector<int>&)> rec = [&](NodeId e, const std::vector<int>& out_ids) {
    ir::EinsumSpec s = *plain_spec(g, e);
    std::map<char, int> local;
    for (size_t i = 0; i < s.out.size(); ++i) local[s.out[i]] = out_ids[i];
    for (char ch : s.a + s.b)
      if (!local.count(ch)) {
        local[ch] = static_cast<int>(c.size.size());
        c.size.push_back(0);
      }
    double f = 2;
    for (int k = 0; k < 2; ++k) {
      NodeId x = g[e].args[k];
      const std::string& ls = k == 0 ? s.a : s.b;
      std::vector<int> ids;
      for (size_t i = 0; i < ls.size(); ++i) {
        ids.push_back(local[ls[i]]);
        c.size[local[ls[i]]] = g[x].type.shape[i];
      }
      if (uses[x] == 1 && plain_spec(g, x)) {
        rec(x, ids);
      } else {
        c.leaves.push_back(x);
        c.labels.push_back(ids);
      }
    }
    for (const auto& [ch, id] : local) f *= static_cast<double>(c.size[id]);
    c.flops += f;
  };
  std::vector<int> out;
  for (int i = 0; i < g[root].type.rank(); ++i) {
    out.push_back(i);
    c.size.push_back(g[root].type.shape[i]);
  }
  rec(root, out);
  return c;
}

// The labels the product of leaves [i, j] keeps: for one leaf all of its
// own; otherwise those that the output or a leaf outside the run carries, in
// order of first appearance.
std::vector<int> kept_labels(const Chain& c, int i, int j, int out_rank) {
  if (i == j) return c.labels[i];
  std::vector<int> r;
  for (int l = i; l <= j; ++l)
    for (int id : c.labels[l]) {
      if (std::find(r.begin(), r.end(), id) != r.end()) continue;
      bool needed = id < out_rank;
      for (int o = 0; o < static_cast<int>(c.leaves.size()) && !needed; ++o)
        if ((o < i || o > j) && std::find(c.labels[o].begin(), c.labels[o].end(), id) != c.labels[o].end())
          needed = true;
      if (needed) r.push_back(id);
    }
  return r;
}

double pair_flops(const Chain& c, const std::vector<int>& x, const std::vector<int>& y) {
  std::set<int> u(x.begin(), x.end());
  u.insert(y.begin(), y.end());
  double f = 2;
  for (int id : u) f *= static_cast<double>(c.size[id]);
  return f;
}

// Matrix-chain order: the least FLOPs over every bracketing of contiguous
// runs of leaves, and the split points of one such bracketing in pre-order.
double best_order(const Chain& c, int out_rank, std::vector<int>* order) {
  const int n = static_cast<int>(c.leaves.size());
  std::vector<std::vector<double>> best(n, std::vector<double>(n, 0));
  std::vector<std::vector<int>> split(n, std::vector<int>(n, -1));
  std::vector<std::vector<std::vector<int>>> kept(n, std::vector<std::vector<int>>(n));
  for (int i = 0; i < n; ++i) kept[i][i] = kept_labels(c, i, i, out_rank);
  for (int len = 2; len <= n; ++len)
    for (int i = 0; i + len - 1 < n; ++i) {
      int j = i + len - 1;
      kept[i][j] = kept_labels(c, i, j, out_rank);
      for (int k = i; k < j; ++k) {
        double f = best[i][k] + best[k + 1][j] + pair_flops(c, kept[i][k], kept[k + 1][j]);
        if (split[i][j] < 0 || f < best[i][j]) {
          best[i][j] = f;
          split[i][j] = k;
        }
      }
    }
  std::function<void(int, int)> walk = [&](int i, int j) {
    if (i == j) return;
    order->push_back(split[i][j]);
    walk(i, split[i][j]);
    walk(split[i][j] + 1, j);
  };
  walk(0, n - 1);
  return best[0][n - 1];
}

// The einsum spec of one step: the usual matmul letters when it is a matrix
// or matrix-vector product, letters by first appearance otherwise.
std::string step_spec(const std::vector<int>& a, const std::vector<int>& b, const std::vector<int>& out) {
  using V = std::vector<int>;
  if (a.size() == 2 && b.size() == 2 && a[1] == b[0] && out == V{a[0], b[1]} && a[0] != b[1]) return "mk,kn->mn";
  if (a.size() == 2 && b.size() == 1 && a[1] == b[0] && out == V{a[0]}) return "mk,k->m";
  if (a.size() == 1 && b.size() == 2 && a[0] == b[0] && out == V{b[1]}) return "k,kn->n";
  static const std::string letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::map<int, char> l;
  auto name_of = [&](const V& v) {
    std::string s;
    for (int id : v) {
      if (!l.count(id)) {
        if (l.size() >= letters.size()) throw InternalError("reassociate-chain: more than 52 labels");
        l[id] = letters[l.size()];
      }
      s += l[id];
    }
    return s;
  };
  std::string sa = name_of(a), sb = name_of(b);
  return sa + "," + sb + "->" + name_of(out);
}

bool is_chain_root(const Graph& g, NodeId e, const std::vector<int>& uses, const std::vector<bool>& live) {
  if (!plain_spec(g, e) || uses[e] != 1) return static_cast<bool>(plain_spec(g, e));
  for (NodeId u = e + 1; u < g.size(); ++u)
    if (live[u] && std::find(g[u].args.begin(), g[u].args.end(), e) != g[u].args.end())
      return !plain_spec(g, u);  // folded into its consumer's chain
  return true;
}

std::string bracketing(const Graph& g, const Chain& c, const std::vector<int>& order) {
  size_t pos = 0;
  std::function<std::string(int, int, bool)> rec = [&](int i, int j, bool top) -> std::string {
    if (i == j) return name(g, c.leaves[i]);
    int k = order.at(pos++);
    // The splits are in pre-order: the left run is written (and takes its
    // splits) before the right one, in two statements because the operands
    // of one + are unsequenced.
    std::string s = rec(i, k, false);
    s += " @ " + rec(k + 1, j, false);
    return top ? s : "(" + s + ")";
  };
  return rec(0, static_cast<int>(c.leaves.size()) - 1, true);
}

}  // namespace

std::optional<Graph> sum_into_contraction(const Graph& g, const Move& m) {
  NodeId r = m.site.at(0);
  std::optional<SumPlan> p = plan_sum(g, r);
  if (!p) return std::nullopt;
  std::map<NodeId, Builder> rep;
  rep[r] = [&](Graph& ng, const std::vector<NodeId>& map) {
    const ir::EinsumSpec& s = p->s;
    auto pre = [&](NodeId x, const std::string& labels) {
      std::vector<int64_t> ax = positions(labels, p->moved);
      return ax.empty() ? x : ir::reduce(ng, Op::ReduceSum, x, ax);
    };
    NodeId a = pre(map[g[p->e].args[0]], s.a), b = pre(map[g[p->e].args[1]], s.b);
    std::string out = without(s.out, p->moved);
    NodeId ne = ir::einsum(ng, without(s.a, p->moved) + "," + without(s.b, p->moved) + "->" + out, a, b);
    std::vector<int64_t> rest = positions(out, p->kept);
    return rest.empty() ? ne : ir::reduce(ng, Op::ReduceSum, ne, rest);
  };
  return rebuild(g, rep);
}


std::optional<Graph> expand_square(const Graph& g, const Move& m) {
  NodeId r = m.site.at(0);
  std::optional<SquarePlan> plan = plan_square(g, r);
  if (!plan) return std::nullopt;
  std::map<NodeId, Builder> rep;
  rep[r] = [&](Graph& ng, const std::vector<NodeId>& map) {
    const ir::Shape& full = g[g[g[r].args[0]].args[0]].type.shape;
    const ir::Shape& os = g[r].type.shape;
    const ir::DType dt = g[r].type.dtype;
    // sum_k x^2 of one side, broadcast to the output.
    auto norm = [&](NodeId x) {
      NodeId s = ir::reduce(ng, Op::ReduceSum, ir::binary(ng, Op::Mul, x, x), plan->k);
      return ir::broadcast(ng, s, os);
    };
    NodeId np = map[plan->p], nq = map[plan->q];
    // The cross term as one einsum with one label per axis; an axis a side
    // broadcasts (a unit axis) gets a label of its own, of extent 1, which is
    // summed over.
    static const std::string shared = "abcdefghijklmnopqrstuvwxyz", own_p = "ABCDEFGHIJKLM", own_q = "NOPQRSTUVWXYZ";
    if (full.size() > own_p.size()) throw InternalError("expand-square-of-difference: rank above 13");
    std::string la, lb, lo;
    for (size_t a = 0; a < full.size(); ++a) {
      bool summed = std::find(plan->k.begin(), plan->k.end(), static_cast<int64_t>(a)) != plan->k.end();
      int64_t pa = ng[np].type.shape[a], qa = ng[nq].type.shape[a];
      bool both = summed || pa == qa;  // the same extent on both sides: one label
      la += both || pa != 1 ? shared[a] : own_p[a];
      lb += both || qa != 1 ? shared[a] : own_q[a];
      if (!summed) lo += shared[a];
    }
    NodeId cross = ir::einsum(ng, la + "," + lb + "->" + lo, np, nq);
    NodeId two = ir::broadcast(ng, ir::reshape(ng, ir::constant(ng, 2.0, dt), ir::Shape(os.size(), 1)), os);
    return ir::binary(ng, Op::Sub, ir::binary(ng, Op::Add, norm(np), norm(nq)), ir::binary(ng, Op::Mul, two, cross));
  };
  return rebuild(g, rep);
}

std::optional<Graph> reassociate_chain(const Graph& g, const Move& m) {
  NodeId root = m.site.at(0);
  if (!plain_spec(g, root) || m.order.empty()) return std::nullopt;
  std::vector<bool> live = live_nodes(g);
  if (!live[root]) return std::nullopt;
  std::vector<int> uses = count_uses(g, live);
  Chain c = collect(g, root, uses);
  const int n = static_cast<int>(c.leaves.size());
  const int out_rank = g[root].type.rank();
  if (n < 3 || static_cast<int>(m.order.size()) != n - 1) return std::nullopt;
  std::map<NodeId, Builder> rep;
  rep[root] = [&](Graph& ng, const std::vector<NodeId>& map) {
    size_t pos = 0;
    std::function<std::pair<NodeId, std::vector<int>>(int, int)> build = [&](int i, int j) {
      if (i == j) return std::make_pair(map[c.leaves[i]], c.labels[i]);
      int k = m.order.at(pos++);
      if (k < i || k >= j) throw InternalError("reassociate-chain: split outside its run");
      auto l = build(i, k), r = build(k + 1, j);
      std::vector<int> out = kept_labels(c, i, j, out_rank);
      if (i == 0 && j == n - 1) {
        out.clear();
        for (int o = 0; o < out_rank; ++o) out.push_back(o);
      }
      return std::make_pair(ir::einsum(ng, step_spec(l.second, r.second, out), l.first, r.first), out);
    };
    return build(0, n - 1).first;
  };
  return rebuild(g, rep);
}

std::vector<Move> contraction_moves(const Graph& g, const std::vector<bool>& live) {
  std::vector<Move> out;
  std::vector<int> uses = count_uses(g, live);
  for (NodeId i = 0; i < g.size(); ++i) {
    if (!live[i]) continue;
    if (std::optional<SumPlan> p = plan_sum(g, i)) {
      std::string d = "sum over " + p->moved + " of " + name(g, p->e) + " \"" + g[p->e].attrs.text +
                      "\" taken in the operand that carries it first (";
      for (int k = 0; k < 2; ++k) {
        std::string mine;
        for (char l : p->moved)
          if ((k == 0 ? p->s.a : p->s.b).find(l) != std::string::npos) mine += l;
        if (!mine.empty()) d += name(g, g[p->e].args[k]) + " summed over " + mine + "; ";
      }
      d += p->kept.empty() ? "nothing left outside)" : p->kept + " carried by both operands stays outside)";
      out.push_back({"sum-into-contraction", d, {i}, 0});
    }
    if (std::optional<SquarePlan> p = plan_square(g, i))
      out.push_back({"expand-square-of-difference",
                     "sum of (" + name(g, p->p) + " - " + name(g, p->q) + ")^2 at " + name(g, i) +
                         " as |p|^2 + |q|^2 - 2 p.q, the cross term one contraction (it cancels where p is near "
                         "q and far from 0: optimize refuses it when its kernel misses the budget on offset inputs)",
                     {i}, 0});
    if (g[i].op == Op::Einsum && is_chain_root(g, i, uses, live)) {
      Chain c = collect(g, i, uses);
      if (c.leaves.size() < 3) continue;
      Move m{"reassociate-chain", "", {i}, 0};
      double f = best_order(c, g[i].type.rank(), &m.order);
      if (!(f < c.flops)) continue;
      m.detail = "the contraction chain at " + name(g, i) + " over " + std::to_string(c.leaves.size()) +
                 " operands as " + bracketing(g, c, m.order) + " (order of fewest FLOPs: " + fmt(c.flops) +
                 " -> " + fmt(f) + ")";
      out.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace axon::rewrite::detail
