// enumerate.h: terms, modular fingerprints, candidate rules, proofs.
#include "rewrite/enumerate.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "ir/graph.h"
#include "verify/smt/prove.h"

namespace axon::rewrite {
namespace {

constexpr uint64_t kP = 2147483647;  // 2^31 - 1

enum class T { MK, KN, MN };  // the output type of a term

struct Term {
  std::string op;  // "X", "Y", "W", "V", "neg", "+", "-", "*", "@"
  std::vector<int> kids;
  T type;
  int ops;
  std::string text;
  std::vector<uint64_t> value;  // modulo kP, row-major at M=3, K=4, N=5
};

constexpr int64_t kM = 3, kK = 4, kN = 5;

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::vector<uint64_t> matmul_mod(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  std::vector<uint64_t> out(kM * kN, 0);
  for (int64_t i = 0; i < kM; ++i)
    for (int64_t j = 0; j < kN; ++j) {
      uint64_t acc = 0;
      for (int64_t k = 0; k < kK; ++k) acc = (acc + a[i * kK + k] * b[k * kN + j]) % kP;
      out[i * kN + j] = acc;
    }
  return out;
}

class Enumerator {
 public:
  explicit Enumerator(uint64_t seed) : seed_(seed) {}

  void run(int max_ops) {
    for (const char* name : {"X", "Y"}) leaf(name, T::MK);
    for (const char* name : {"W", "V"}) leaf(name, T::KN);
    for (int n = 1; n <= max_ops; ++n) {
      int count = static_cast<int>(terms_.size());
      for (int a = 0; a < count; ++a) {
        if (terms_[a].ops + 1 == n) add("neg", {a});
        for (int b = 0; b < count; ++b) {
          if (terms_[a].ops + terms_[b].ops + 1 != n) continue;
          if (terms_[a].type == terms_[b].type)
            for (const char* op : {"+", "-", "*"}) add(op, {a, b});
          if (terms_[a].type == T::MK && terms_[b].type == T::KN) add("@", {a, b});
        }
      }
    }
  }
  const std::vector<Term>& terms() const { return terms_; }

 private:
  void leaf(const char* name, T type) {
    Term t{name, {}, type, 0, name, {}};
    size_t n = type == T::MK ? kM * kK : kK * kN;
    for (size_t i = 0; i < n; ++i) t.value.push_back(splitmix(seed_) % kP);
    terms_.push_back(std::move(t));
  }
  void add(const std::string& op, std::vector<int> kids) {
    Term t;
    t.op = op;
    t.kids = kids;
    const Term& a = terms_[kids[0]];
    t.ops = a.ops + 1;
    if (op == "neg") {
      t.type = a.type;
      t.text = "-" + a.text;
      for (uint64_t v : a.value) t.value.push_back((kP - v) % kP);
    } else {
      const Term& b = terms_[kids[1]];
      t.ops += b.ops;
      t.type = op == "@" ? T::MN : a.type;
      t.text = "(" + a.text + " " + op + " " + b.text + ")";
      if (op == "@") t.value = matmul_mod(a.value, b.value);
      else
        for (size_t i = 0; i < a.value.size(); ++i) {
          uint64_t x = a.value[i], y = b.value[i];
          t.value.push_back(op == "+" ? (x + y) % kP : op == "-" ? (x + kP - y) % kP : (x * y) % kP);
        }
    }
    terms_.push_back(std::move(t));
  }
  uint64_t seed_;
  std::vector<Term> terms_;
};

// Builds term `i` into `g` over the parameters X, Y, W, V.
ir::NodeId build(const std::vector<Term>& ts, int i, ir::Graph& g) {
  const Term& t = ts[i];
  if (t.kids.empty()) {
    static const std::map<std::string, int> index = {{"X", 0}, {"Y", 1}, {"W", 2}, {"V", 3}};
    return ir::param(g, index.at(t.op));
  }
  ir::NodeId a = build(ts, t.kids[0], g);
  if (t.op == "neg") return ir::unary(g, ir::Op::Neg, a);
  ir::NodeId b = build(ts, t.kids[1], g);
  if (t.op == "@") return ir::einsum(g, "mk,kn->mn", a, b);
  return ir::binary(g, t.op == "+" ? ir::Op::Add : t.op == "-" ? ir::Op::Sub : ir::Op::Mul, a, b);
}

ir::Graph term_graph(const std::vector<Term>& ts, int i, int64_t m, int64_t k, int64_t n) {
  ir::Graph g;
  g.entry = "rule";
  g.params = {{"X", {ir::DType::F32, {m, k}}}, {"Y", {ir::DType::F32, {m, k}}},
              {"W", {ir::DType::F32, {k, n}}}, {"V", {ir::DType::F32, {k, n}}}};
  g.outputs.push_back(build(ts, i, g));
  return ir::compact(g);
}

std::string strip(const std::string& s) {  // the outer parentheses
  return s.size() > 1 && s.front() == '(' && s.back() == ')' ? s.substr(1, s.size() - 2) : s;
}

}  // namespace

RuleLibrary enumerate_rules(const EnumerateOptions& o) {
  Enumerator en(o.seed);
  en.run(o.max_ops);
  const std::vector<Term>& ts = en.terms();
  RuleLibrary lib;
  lib.terms = static_cast<int>(ts.size());
  // Groups by (type, fingerprint), canonical = smallest (ops, text).
  std::map<std::pair<int, std::vector<uint64_t>>, std::vector<int>> groups;
  for (int i = 0; i < static_cast<int>(ts.size()); ++i) groups[{static_cast<int>(ts[i].type), ts[i].value}].push_back(i);
  std::vector<int> canon(ts.size());
  for (auto& [key, members] : groups) {
    std::sort(members.begin(), members.end(), [&](int a, int b) {
      return std::tie(ts[a].ops, ts[a].text) < std::tie(ts[b].ops, ts[b].text);
    });
    for (int i : members) canon[i] = members[0];
  }
  std::vector<std::pair<int, int>> candidates;
  for (int i = 0; i < static_cast<int>(ts.size()); ++i) {
    if (canon[i] == i) continue;
    // Kids canonical, and none of them identically zero (X - X): a rule per
    // zero would mostly restate that zero absorbs.
    bool kids_canonical = true;
    for (int k : ts[i].kids)
      kids_canonical = kids_canonical && canon[k] == k &&
                       std::any_of(ts[k].value.begin(), ts[k].value.end(), [](uint64_t v) { return v != 0; });
    if (kids_canonical) candidates.push_back({i, canon[i]});
  }
  std::sort(candidates.begin(), candidates.end(), [&](auto a, auto b) {
    return std::tie(ts[a.first].ops, ts[a.first].text) < std::tie(ts[b.first].ops, ts[b.first].text);
  });
  // One rule per class under renaming the inputs (X <-> Y, W <-> V).
  auto renamed = [](std::string t) {
    for (char& ch : t) ch = ch == 'X' ? 'Y' : ch == 'Y' ? 'X' : ch == 'W' ? 'V' : ch == 'V' ? 'W' : ch;
    return t;
  };
  std::set<std::pair<std::string, std::string>> seen;
  std::vector<std::pair<int, int>> distinct;
  for (auto [l, r] : candidates) {
    std::pair<std::string, std::string> key{ts[l].text, ts[r].text}, other{renamed(ts[l].text), renamed(ts[r].text)};
    if (seen.count(key) || seen.count(other)) continue;
    seen.insert(key);
    distinct.push_back({l, r});
  }
  candidates = std::move(distinct);
  lib.candidates = static_cast<int>(candidates.size());
  for (auto [l, r] : candidates) {
    verify::smt::RewriteCase c;
    c.name = ts[l].text + " = " + ts[r].text;
    c.dims = {"M", "K", "N"};
    c.build = [&ts, l = l, r = r](const verify::smt::DimSizes& d) {
      return verify::smt::RewritePair{term_graph(ts, l, d.at("M"), d.at("K"), d.at("N")),
                                      term_graph(ts, r, d.at("M"), d.at("K"), d.at("N"))};
    };
    verify::smt::ProofOptions po;
    po.timeout_ms = o.timeout_ms;
    po.numeric_trials = 2;
    verify::smt::ProofResult p = verify::smt::prove_equal(c, po);
    if (p.status != verify::smt::ProofStatus::Proved) {
      ++lib.refused;
      continue;
    }
    Rule rule;
    rule.name = "r" + std::to_string(lib.rules.size() + 1);
    rule.lhs = strip(ts[l].text);
    rule.rhs = strip(ts[r].text);
    rule.side_conditions = "none";
    rule.proved_by = "z3, symbolic M, K, N >= 1, no axioms";
    rule.solver_ms = p.solver_ms;
    rule.queries = p.queries;
    lib.rules.push_back(rule);
  }
  return lib;
}

nlohmann::json library_json(const RuleLibrary& lib, const EnumerateOptions& o) {
  nlohmann::json j;
  j["generator"] = "axon_rules (src/rewrite/enumerate.h)";
  j["options"] = {{"max_ops", o.max_ops}, {"seed", o.seed},
                  {"inputs", "X, Y: [M, K]; W, V: [K, N]"}, {"ops", "neg + - * @"}};
  j["stats"] = {{"terms", lib.terms}, {"candidates", lib.candidates}, {"refused", lib.refused},
                {"rules", lib.rules.size()}};
  j["rules"] = nlohmann::json::array();
  for (const Rule& r : lib.rules)
    j["rules"].push_back({{"name", r.name}, {"lhs", r.lhs}, {"rhs", r.rhs}, {"side_conditions", r.side_conditions},
                          {"proved_by", r.proved_by}, {"solver_ms", r.solver_ms}, {"queries", r.queries}});
  return j;
}

nlohmann::json library_fingerprint(const nlohmann::json& library) {
  nlohmann::json j = library;
  for (auto& r : j["rules"]) r.erase("solver_ms");
  return j;
}

}  // namespace axon::rewrite
