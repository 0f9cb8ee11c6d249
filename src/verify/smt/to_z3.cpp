#include "verify/smt/to_z3.h"

#include <algorithm>
#include <numeric>

#include "support/diagnostic.h"

namespace axon::verify::smt {

namespace {
constexpr int kMaxBijectionTries = 24;

std::string extent_key(ProofContext& s, const std::string& var) {
  const SymIndex* e = s.extent_of(var);
  AXON_CHECK(e) << "index variable " << var << " has no range";
  return e->str();
}

// All bijections i -> p[i] between two lists whose keys agree, identity first,
// at most `cap` of them.
std::vector<std::vector<int>> bijections(const std::vector<std::string>& a_keys,
                                         const std::vector<std::string>& b_keys, int cap) {
  std::vector<std::vector<int>> out;
  if (a_keys.size() != b_keys.size()) return out;
  std::vector<int> p(a_keys.size());
  std::iota(p.begin(), p.end(), 0);
  do {
    bool ok = true;
    for (size_t i = 0; i < p.size() && ok; ++i) ok = a_keys[i] == b_keys[p[i]];
    if (ok) out.push_back(p);
  } while (static_cast<int>(out.size()) < cap && std::next_permutation(p.begin(), p.end()));
  return out;
}
}  // namespace

z3::func_decl Z3Translator::function(const std::string& name, int arity, bool int_args) {
  std::string key = name + "/" + std::to_string(arity) + (int_args ? "i" : "r");
  auto it = functions_.find(key);
  if (it != functions_.end()) return it->second;
  z3::context& c = s_.ctx();
  z3::sort_vector dom(c);
  for (int i = 0; i < arity; ++i) dom.push_back(int_args ? c.int_sort() : c.real_sort());
  z3::func_decl f = c.function(name.c_str(), dom, c.real_sort());
  functions_.emplace(key, f);
  return f;
}

z3::expr Z3Translator::var(const std::string& name, const Env& env, Query& q) {
  auto it = env.find(name);
  if (it != env.end()) return it->second;
  q.raw_vars.insert(name);
  return s_.ctx().int_const(name.c_str());
}

z3::expr Z3Translator::index(const SymIndex& i, const Env& env, Query& q) {
  z3::context& c = s_.ctx();
  z3::expr e = c.int_val(static_cast<int64_t>(i.constant()));
  for (const auto& [name, k] : i.terms()) e = e + c.int_val(static_cast<int64_t>(k)) * var(name, env, q);
  return e;
}

z3::expr Z3Translator::poly(const PolyRef& p, const Env& env, Query& q) {
  z3::context& c = s_.ctx();
  z3::expr sum = c.real_val(0);
  for (const Monomial& m : p->terms) {
    z3::expr v = m.binders.empty()
                     ? monomial_body(m.factors, env, q)
                     : closure_value(Closure{AtomKind::Param, m.id, m.binders, m.factors, nullptr, m.free}, env, q);
    sum = sum + m.coef * v;
  }
  return sum;
}

z3::expr Z3Translator::monomial_body(const std::vector<AtomRef>& factors, const Env& env, Query& q) {
  z3::expr prod = s_.ctx().real_val(1);
  for (const AtomRef& a : factors) prod = prod * atom(a, env, q);
  return prod;
}

z3::expr Z3Translator::atom(const AtomRef& a, const Env& env, Query& q) {
  z3::context& c = s_.ctx();
  switch (a->kind) {
    case AtomKind::Param: {
      z3::func_decl f = function("in:" + a->name, static_cast<int>(a->index.size()), true);
      z3::expr_vector args(c);
      for (const SymIndex& i : a->index) args.push_back(index(i, env, q));
      return f(args);
    }
    case AtomKind::Index: return z3::to_real(var(a->name, env, q));
    case AtomKind::Fn: {
      z3::expr_vector args(c);
      for (const PolyRef& p : a->args) args.push_back(poly(p, env, q));
      if (a->name == "floor") return z3::to_real(z3::expr(c, Z3_mk_real2int(c, args[0])));
      z3::expr app = function(a->name, static_cast<int>(args.size()), false)(args);
      const AxiomSet& ax = s_.axioms();
      if (a->name == "exp" && ax.has(Axiom::ExpPositive)) q.facts.push_back(app > 0);
      if (a->name == "sqrt" && ax.has(Axiom::SqrtSquare))
        q.facts.push_back(z3::implies(args[0] >= 0, app * app == args[0] && app >= 0));
      if (a->name == "tanh" && ax.has(Axiom::TanhAsExp)) {
        // The same exp as the graphs' own exp atoms: congruence links
        // exp(-2a) here to an exp of an argument equal to -2a there.
        z3::expr e = function("exp", 1, false)(c.real_val(-2) * args[0]);
        q.facts.push_back(app * (1 + e) == 1 - e && e > 0);
      }
      return app;
    }
    case AtomKind::Recip: return c.real_val(1) / poly(a->args[0], env, q);
    case AtomKind::Ite: return z3::ite(cond(a->cond, env, q), poly(a->args[0], env, q), poly(a->args[1], env, q));
    case AtomKind::Max:
    case AtomKind::Min:
      return closure_value(Closure{a->kind, a->id, a->binders, {}, a->args[0], a->free}, env, q);
  }
  AXON_CHECK(false) << "atom kind";
  return c.real_val(0);
}

z3::expr Z3Translator::cond(const CondRef& k, const Env& env, Query& q) {
  z3::context& c = s_.ctx();
  switch (k->kind) {
    case CondKind::True: return c.bool_val(true);
    case CondKind::False: return c.bool_val(false);
    case CondKind::RealLt: return poly(k->poly, env, q) < 0;
    case CondKind::RealLe: return poly(k->poly, env, q) <= 0;
    case CondKind::RealEq: return poly(k->poly, env, q) == 0;
    case CondKind::IndexLt: return index(k->index, env, q) < 0;
    case CondKind::IndexLe: return index(k->index, env, q) <= 0;
    case CondKind::IndexEq: return index(k->index, env, q) == 0;
    case CondKind::And: return cond(k->args[0], env, q) && cond(k->args[1], env, q);
    case CondKind::Or: return cond(k->args[0], env, q) || cond(k->args[1], env, q);
    case CondKind::Not: return !cond(k->args[0], env, q);
  }
  return c.bool_val(false);
}

z3::expr Z3Translator::closure_body(const Closure& c, const Env& env, Query& q) {
  return c.kind == AtomKind::Param ? monomial_body(c.factors, env, q) : poly(c.body, env, q);
}

z3::expr Z3Translator::closure_value(const Closure& c, const Env& env, Query& q) {
  int cls = class_of(c);
  const Class k = classes_[cls];
  // The class function takes the representative's parameters in its order;
  // class_of matched c's parameters to them.
  const std::vector<int>& perm = param_perm_.at({static_cast<int>(c.kind), c.id});
  std::vector<z3::expr> slots(k.rep.params.size(), s_.ctx().int_val(0));
  for (size_t i = 0; i < c.params.size(); ++i) slots[perm[i]] = var(c.params[i], env, q);
  z3::expr_vector args(s_.ctx());
  for (const z3::expr& e : slots) args.push_back(e);
  return k.fn(args);
}

void Z3Translator::classify_in(const PolyRef& p) {
  for (const Monomial& m : p->terms) {
    if (!m.binders.empty()) class_of(Closure{AtomKind::Param, m.id, m.binders, m.factors, nullptr, m.free});
    else
      for (const AtomRef& a : m.factors) classify_in(a);
  }
}

void Z3Translator::classify_in(const AtomRef& a) {
  switch (a->kind) {
    case AtomKind::Param:
    case AtomKind::Index: return;
    case AtomKind::Fn:
    case AtomKind::Recip:
      for (const PolyRef& p : a->args) classify_in(p);
      return;
    case AtomKind::Ite:
      classify_in(a->cond);
      for (const PolyRef& p : a->args) classify_in(p);
      return;
    case AtomKind::Max:
    case AtomKind::Min: class_of(Closure{a->kind, a->id, a->binders, {}, a->args[0], a->free}); return;
  }
}

void Z3Translator::classify_in(const CondRef& k) {
  if (k->poly) classify_in(k->poly);
  for (const CondRef& a : k->args) classify_in(a);
}

void Z3Translator::classify_nested(const Closure& c) {
  if (c.kind == AtomKind::Param) {
    for (const AtomRef& a : c.factors) classify_in(a);
  } else {
    classify_in(c.body);
  }
}

int Z3Translator::class_of(const Closure& c) {
  auto key = std::make_pair(static_cast<int>(c.kind), c.id);
  auto it = class_by_closure_.find(key);
  if (it != class_by_closure_.end()) return it->second;
  // A closure is never part of its own body; reaching it again while it is
  // being classified would recurse without end.
  AXON_CHECK(!classifying_.count(key)) << "closure " << c.id << " reached again while its class is being decided";
  classifying_.insert(key);
  struct Done {
    std::set<std::pair<int, int>>& s;
    std::pair<int, int> k;
    ~Done() { s.erase(k); }
  } done{classifying_, key};
  // Inner closures first: matching below encodes bodies, which must then
  // find every nested closure already in a class.
  classify_nested(c);
  for (size_t k = 0; k < classes_.size(); ++k) {
    std::vector<int> perm;
    // A copy: matching encodes bodies, which may add classes and move the vector.
    Closure rep = classes_[k].rep;
    if (rep.kind == c.kind && same_class(c, rep, &perm)) {
      class_by_closure_[key] = static_cast<int>(k);
      param_perm_[key] = perm;
      return static_cast<int>(k);
    }
  }
  std::string name = std::string(c.kind == AtomKind::Param ? "sum" : c.kind == AtomKind::Max ? "max" : "min") +
                     "#" + std::to_string(classes_.size());
  classes_.push_back(Class{c, function(name, static_cast<int>(c.params.size()), true)});
  std::vector<int> id(c.params.size());
  std::iota(id.begin(), id.end(), 0);
  class_by_closure_[key] = static_cast<int>(classes_.size()) - 1;
  param_perm_[key] = id;
  return static_cast<int>(classes_.size()) - 1;
}

bool Z3Translator::same_class(const Closure& u, const Closure& rep, std::vector<int>* perm_out) {
  if (u.binders.size() != rep.binders.size() || u.params.size() != rep.params.size()) return false;
  std::vector<std::string> ub, rb, up, rp;
  for (const Binder& b : u.binders) ub.push_back(b.extent.str());
  for (const Binder& b : rep.binders) rb.push_back(b.extent.str());
  for (const std::string& v : u.params) up.push_back(extent_key(s_, v));
  for (const std::string& v : rep.params) rp.push_back(extent_key(s_, v));
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  if (sorted(ub) != sorted(rb) || sorted(up) != sorted(rp)) return false;
  z3::context& c = s_.ctx();
  int tries = 0;
  for (const std::vector<int>& pi : bijections(up, rp, 6)) {
    for (const std::vector<int>& sigma : bijections(ub, rb, kMaxBijectionTries)) {
      if (++tries > kMaxBijectionTries || s_.budget_spent()) return false;
      Env eu, er;
      Query q;
      std::vector<z3::expr> ranges;
      for (size_t i = 0; i < pi.size(); ++i) {
        z3::expr p = c.int_const(("p!" + std::to_string(next_const_++)).c_str());
        eu.emplace(u.params[i], p);
        er.emplace(rep.params[pi[i]], p);
        ranges.push_back(p >= 0);
        ranges.push_back(p < index(*s_.extent_of(u.params[i]), {}, q));
      }
      for (size_t j = 0; j < sigma.size(); ++j) {
        z3::expr b = c.int_const(("b!" + std::to_string(next_const_++)).c_str());
        eu.emplace(u.binders[j].var, b);
        er.emplace(rep.binders[sigma[j]].var, b);
        ranges.push_back(b >= 0);
        ranges.push_back(b < index(u.binders[j].extent, {}, q));
      }
      z3::expr lhs = closure_body(u, eu, q);
      z3::expr rhs = closure_body(rep, er, q);
      std::vector<z3::expr> facts = facts_of(q);
      facts.insert(facts.end(), ranges.begin(), ranges.end());
      if (s_.check(lhs == rhs, facts) == Verdict::Valid) {
        *perm_out = pi;
        return true;
      }
    }
  }
  return false;
}

std::vector<z3::expr> Z3Translator::facts_of(Query& q) {
  std::vector<std::string> vars(q.raw_vars.begin(), q.raw_vars.end());
  std::vector<z3::expr> f = s_.range_facts(vars);
  f.insert(f.end(), q.facts.begin(), q.facts.end());
  return f;
}

Verdict Z3Translator::prove_equal(const PolyRef& a, const PolyRef& b, z3::model* model) {
  if (a->id == b->id) return Verdict::Valid;
  Query q;
  z3::expr za = poly(a, {}, q);
  z3::expr zb = poly(b, {}, q);
  return s_.check(za == zb, facts_of(q), model);
}

std::map<std::string, int64_t> Z3Translator::model_sizes(const z3::model& m) {
  std::map<std::string, int64_t> out;
  for (const std::string& d : s_.dims()) {
    z3::expr v = m.eval(s_.size_expr(d), true);
    int64_t x = 0;
    if (v.is_numeral_i64(x)) out[d] = x;
  }
  return out;
}

std::string Z3Translator::describe_model(const z3::model& m, const std::vector<std::string>& vars) {
  std::string s;
  for (const std::string& d : s_.dims())
    s += (s.empty() ? "" : ", ") + d + "=" + m.eval(s_.size_expr(d), true).to_string();
  for (const std::string& v : vars)
    s += (s.empty() ? "" : ", ") + v + "=" + m.eval(s_.ctx().int_const(v.c_str()), true).to_string();
  return s;
}

}  // namespace axon::verify::smt
