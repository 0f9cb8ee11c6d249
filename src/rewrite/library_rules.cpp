// Applying the rule library (rules/library.json) to a graph: each rule's
// lhs is a term over the variables X, Y, W, V and the ops neg + - * @; it
// matches a subgraph whose nodes are those ops (@ a 2-D matmul), binding
// each variable to one node. A rule is offered only when its rhs has fewer
// ops (the simplifying direction) and uses no variable the lhs lacks. Each
// application is proved on the graph itself like any other move.
#include <fstream>
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "rewrite/rewrite.h"
#include "support/diagnostic.h"

namespace axon::rewrite {
namespace {

struct Pattern {
  std::string op;  // "X".."V", "neg", "+", "-", "*", "@"
  std::vector<Pattern> kids;
};

struct Parser {
  const std::string& s;
  size_t i = 0;
  void ws() {
    while (i < s.size() && s[i] == ' ') ++i;
  }
  Pattern unary() {
    ws();
    if (i >= s.size()) throw InternalError("rule pattern ends early: " + s);
    if (s[i] == '-') {
      ++i;
      return {"neg", {unary()}};
    }
    if (s[i] == '(') {
      ++i;
      Pattern p = binary();
      ws();
      if (i >= s.size() || s[i] != ')') throw InternalError("rule pattern: ')' expected in " + s);
      ++i;
      return p;
    }
    return {std::string(1, s[i++]), {}};
  }
  Pattern binary() {
    Pattern a = unary();
    ws();
    if (i < s.size() && std::string("+-*@").find(s[i]) != std::string::npos) {
      std::string op(1, s[i++]);
      Pattern b = unary();
      return {op, {a, b}};
    }
    return a;
  }
};

Pattern parse(const std::string& text) {
  Parser p{text};
  Pattern r = p.binary();
  p.ws();
  if (p.i != text.size()) throw InternalError("rule pattern: trailing text in " + text);
  return r;
}

int count_ops(const Pattern& p) {
  int n = p.kids.empty() ? 0 : 1;
  for (const Pattern& k : p.kids) n += count_ops(k);
  return n;
}

void vars(const Pattern& p, std::set<std::string>* out) {
  if (p.kids.empty()) out->insert(p.op);
  for (const Pattern& k : p.kids) vars(k, out);
}

bool is_2d_matmul(const ir::Graph& g, ir::NodeId id) {
  const ir::Node& n = g[id];
  if (n.op != ir::Op::Einsum) return false;
  ir::EinsumSpec s;
  return ir::parse_einsum(n.attrs.text, &s) && s.a.size() == 2 && s.b.size() == 2 && s.out.size() == 2 &&
         s.a[1] == s.b[0] && s.out[0] == s.a[0] && s.out[1] == s.b[1] && s.a[0] != s.a[1] && s.b[1] != s.a[1] &&
         s.a[0] != s.b[1];
}

bool match(const ir::Graph& g, const Pattern& p, ir::NodeId id, std::map<std::string, ir::NodeId>* env) {
  if (p.kids.empty()) {
    auto [it, fresh] = env->emplace(p.op, id);
    return fresh || it->second == id;
  }
  const ir::Node& n = g[id];
  ir::Op want = p.op == "neg" ? ir::Op::Neg
                : p.op == "+" ? ir::Op::Add
                : p.op == "-" ? ir::Op::Sub
                : p.op == "*" ? ir::Op::Mul
                              : ir::Op::Einsum;
  if (n.op != want || n.args.size() != p.kids.size()) return false;
  if (want == ir::Op::Einsum && !is_2d_matmul(g, id)) return false;
  for (size_t k = 0; k < p.kids.size(); ++k)
    if (!match(g, p.kids[k], n.args[k], env)) return false;
  return true;
}

ir::NodeId build(ir::Graph& g, const Pattern& p, const std::map<std::string, ir::NodeId>& env) {
  if (p.kids.empty()) return env.at(p.op);
  ir::NodeId a = build(g, p.kids[0], env);
  if (p.op == "neg") return ir::unary(g, ir::Op::Neg, a);
  ir::NodeId b = build(g, p.kids[1], env);
  if (p.op == "@") return ir::einsum(g, "mk,kn->mn", a, b);
  return ir::binary(g, p.op == "+" ? ir::Op::Add : p.op == "-" ? ir::Op::Sub : ir::Op::Mul, a, b);
}

}  // namespace

std::vector<LibraryRule> load_library(const std::string& path) {
  std::ifstream f(path);
  if (!f) return {};
  nlohmann::json j = nlohmann::json::parse(f);
  std::vector<LibraryRule> out;
  for (const auto& r : j.at("rules")) {
    LibraryRule lr{r.at("name"), r.at("lhs"), r.at("rhs")};
    Pattern l = parse(lr.lhs), rr = parse(lr.rhs);
    std::set<std::string> lv, rv;
    vars(l, &lv);
    vars(rr, &rv);
    bool covered = std::includes(lv.begin(), lv.end(), rv.begin(), rv.end());
    if (count_ops(rr) < count_ops(l) && covered) out.push_back(lr);
  }
  return out;
}

std::string default_library_path() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists("rules/library.json", ec)) return "rules/library.json";
  // Next to a build folder of the repository: <repo>/build*/axon.
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path p = exe.parent_path().parent_path() / "rules" / "library.json";
    if (fs::exists(p, ec)) return p.string();
    p = exe.parent_path().parent_path().parent_path() / "rules" / "library.json";
    if (fs::exists(p, ec)) return p.string();
  }
  return "";
}

std::optional<ir::Graph> apply_library_rule(const ir::Graph& g, const Move& m) {
  ir::NodeId site = m.site.at(0);
  Pattern l = parse(m.rule_lhs), r = parse(m.rule_rhs);
  std::map<std::string, ir::NodeId> env;
  if (!match(g, l, site, &env)) return std::nullopt;
  ir::Graph ng;
  ng.entry = g.entry;
  ng.params = g.params;
  std::vector<ir::NodeId> map(g.size(), -1);
  for (ir::NodeId i = 0; i < g.size(); ++i) {
    if (i == site) {
      std::map<std::string, ir::NodeId> nenv;
      for (const auto& [v, id] : env) nenv[v] = map[id];
      map[i] = build(ng, r, nenv);
      continue;
    }
    ir::Node n = g[i];
    for (ir::NodeId& a : n.args) a = map[a];
    map[i] = ng.make(std::move(n));
  }
  for (ir::NodeId o : g.outputs) ng.outputs.push_back(map[o]);
  return ir::compact(ng);
}

std::vector<Move> library_moves(const ir::Graph& g, const std::vector<LibraryRule>& rules) {
  std::vector<Move> out;
  std::vector<Pattern> lhs;
  for (const LibraryRule& r : rules) lhs.push_back(parse(r.lhs));
  std::vector<bool> live(g.size(), false);
  for (ir::NodeId o : g.outputs) live[o] = true;
  for (ir::NodeId i = g.size() - 1; i >= 0; --i)
    if (live[i])
      for (ir::NodeId a : g[i].args) live[a] = true;
  for (ir::NodeId i = 0; i < g.size(); ++i) {
    if (!live[i]) continue;
    for (size_t k = 0; k < rules.size(); ++k) {
      std::map<std::string, ir::NodeId> env;
      if (!match(g, lhs[k], i, &env)) continue;
      Move m{"library-rule", rules[k].name + ": " + rules[k].lhs + " => " + rules[k].rhs + " at %" + std::to_string(i),
             {i}, static_cast<int>(k)};
      m.rule_lhs = rules[k].lhs;
      m.rule_rhs = rules[k].rhs;
      if (apply_move(g, m)) out.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace axon::rewrite
