#include "verify/smt/normal_form.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "support/diagnostic.h"
#include "verify/smt/proof_context.h"

namespace axon::verify::smt {

namespace {

ProofContext& S() { return ProofContext::current(); }

using Names = std::vector<std::string>;

Names merge_names(const Names& a, const Names& b) {
  Names out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

Names minus_binders(const Names& a, const std::vector<Binder>& bs) {
  Names out;
  for (const std::string& n : a)
    if (std::none_of(bs.begin(), bs.end(), [&](const Binder& b) { return b.var == n; })) out.push_back(n);
  return out;
}

bool contains(const Names& a, const std::string& n) { return std::binary_search(a.begin(), a.end(), n); }

Names index_vars(const SymIndex& i) {
  Names out;
  for (const auto& kv : i.terms())
    if (!S().is_size(kv.first)) out.push_back(kv.first);
  return out;  // map order is sorted
}

// ---- rationals as Z3 numerals
z3::expr simp(const z3::expr& e) { return e.simplify(); }
z3::expr coef_add(const z3::expr& a, const z3::expr& b) { return simp(a + b); }
z3::expr coef_mul(const z3::expr& a, const z3::expr& b) { return simp(a * b); }
bool coef_is_zero(const z3::expr& c) { return simp(c == 0).is_true(); }
bool coef_is_one(const z3::expr& c) { return simp(c == 1).is_true(); }
int coef_sign(const z3::expr& c) {
  if (simp(c > 0).is_true()) return 1;
  if (simp(c < 0).is_true()) return -1;
  return 0;
}

std::string binders_key(const std::vector<Binder>& bs) {
  std::string k;
  for (const Binder& b : bs) k += b.var + "<" + b.extent.str() + ";";
  return k;
}

// ---- building interned nodes

AtomRef finish_atom(Atom a) {
  std::ostringstream k;
  k << "A" << static_cast<int>(a.kind) << ":" << a.name << "[";
  for (const SymIndex& i : a.index) k << i.str() << ",";
  k << "](";
  for (const PolyRef& p : a.args) k << p->id << ",";
  k << ")c" << (a.cond ? a.cond->id : -1) << "{" << binders_key(a.binders) << "}";
  a.id = S().intern(k.str());
  Names f;
  for (const SymIndex& i : a.index) f = merge_names(f, index_vars(i));
  if (a.kind == AtomKind::Index && !S().is_size(a.name)) f = merge_names(f, {a.name});
  for (const PolyRef& p : a.args) f = merge_names(f, p->free);
  if (a.cond) f = merge_names(f, a.cond->free);
  a.free = minus_binders(f, a.binders);
  return std::make_shared<const Atom>(std::move(a));
}

CondRef finish_cond(Cond c) {
  std::ostringstream k;
  k << "C" << static_cast<int>(c.kind) << ":" << (c.poly ? c.poly->id : -1) << ":" << c.index.str() << "(";
  for (const CondRef& a : c.args) k << a->id << ",";
  k << ")";
  c.id = S().intern(k.str());
  Names f;
  if (c.poly) f = merge_names(f, c.poly->free);
  f = merge_names(f, index_vars(c.index));
  for (const CondRef& a : c.args) f = merge_names(f, a->free);
  c.free = std::move(f);
  return std::make_shared<const Cond>(std::move(c));
}

// Sorts, merges like monomials, drops zeros, interns.
PolyRef finish_poly(std::vector<Monomial> terms) {
  std::sort(terms.begin(), terms.end(), [](const Monomial& a, const Monomial& b) { return a.id < b.id; });
  std::vector<Monomial> out;
  for (Monomial& m : terms) {
    if (!out.empty() && out.back().id == m.id) {
      out.back().coef = coef_add(out.back().coef, m.coef);
      if (coef_is_zero(out.back().coef)) out.pop_back();
      continue;
    }
    if (!coef_is_zero(m.coef)) out.push_back(std::move(m));
  }
  Poly p;
  std::ostringstream k;
  k << "P";
  for (const Monomial& m : out) {
    k << rational_str(m.coef) << "*" << m.id << ";";
    p.free = merge_names(p.free, m.free);
  }
  p.terms = std::move(out);
  p.id = S().intern(k.str());
  return std::make_shared<const Poly>(std::move(p));
}

// A monomial from its parts: merges exps (exp-of-sum), drops binders the
// body does not use (multiplying by their extents), and interns.
PolyRef make_monomial(z3::expr coef, std::vector<Binder> binders, std::vector<AtomRef> factors) {
  if (coef_is_zero(coef)) return zero();
  if (S().axioms().has(Axiom::ExpOfSum)) {
    std::vector<AtomRef> exps, rest;
    for (const AtomRef& a : factors) (a->kind == AtomKind::Fn && a->name == "exp" ? exps : rest).push_back(a);
    if (exps.size() > 1) {
      // The binders stay outside until the whole body is known: a binder
      // that only the exps mention must not be mistaken for an unused one.
      PolyRef arg = zero();
      for (const AtomRef& e : exps) arg = add(arg, e->args[0]);
      return sum_over(binders, mul(make_monomial(coef, {}, rest), fn("exp", {arg})));
    }
  }
  Names used;
  for (const AtomRef& a : factors) used = merge_names(used, a->free);
  std::vector<Binder> kept;
  PolyRef extent_factor = constant(1);
  for (const Binder& b : binders) {
    if (contains(used, b.var)) kept.push_back(b);
    else extent_factor = mul(extent_factor, index_value(b.extent));
  }
  z3::expr c1(coef);
  if (!is_constant(extent_factor, &c1)) {
    // Multiply the rest by the (symbolic) extents of the dropped binders.
    PolyRef rest = make_monomial(coef, kept, factors);
    return mul(rest, extent_factor);
  }
  coef = coef_mul(coef, c1);
  if (coef_is_zero(coef)) return zero();
  std::sort(kept.begin(), kept.end(), [](const Binder& a, const Binder& b) { return a.var < b.var; });
  std::sort(factors.begin(), factors.end(), [](const AtomRef& a, const AtomRef& b) { return a->id < b->id; });
  Monomial m{coef, kept, factors};
  std::ostringstream k;
  k << "M{" << binders_key(kept) << "}";
  for (const AtomRef& a : factors) k << a->id << ",";
  m.id = S().intern(k.str());
  m.free = minus_binders(used, kept);
  return finish_poly({std::move(m)});
}

// Renames the binders of m that are named in `clash` to fresh variables.
Monomial rename_binders(const Monomial& m, const Names& clash) {
  std::map<std::string, SymIndex> by;
  for (const Binder& b : m.binders)
    if (contains(clash, b.var)) by[b.var] = SymIndex::var(S().fresh_var("r", b.extent));
  if (by.empty()) return m;
  PolyRef p = substitute(finish_poly({m}), by);
  AXON_CHECK(p->terms.size() == 1) << "renaming binders changed the shape of a monomial";
  return p->terms[0];
}

Names binder_names(const std::vector<Binder>& bs) {
  Names n;
  for (const Binder& b : bs) n.push_back(b.var);
  std::sort(n.begin(), n.end());
  return n;
}

PolyRef mul_monomials(const Monomial& x0, const Monomial& y0) {
  // Keep every binder name unique in the product: a sum multiplied by itself
  // gets a second, fresh copy of its summation variable.
  Names xb = binder_names(x0.binders);
  Monomial y = rename_binders(y0, merge_names(xb, x0.free));
  Monomial x = rename_binders(x0, y.free);
  std::vector<Binder> bs = x.binders;
  bs.insert(bs.end(), y.binders.begin(), y.binders.end());
  std::vector<AtomRef> fs = x.factors;
  fs.insert(fs.end(), y.factors.begin(), y.factors.end());
  return make_monomial(coef_mul(x.coef, y.coef), bs, fs);
}

}  // namespace

// ---- constants and leaves

z3::expr rational(int64_t num, int64_t den) {
  z3::context& c = S().ctx();
  return simp(c.real_val(static_cast<int64_t>(num)) / c.real_val(static_cast<int64_t>(den)));
}

z3::expr rational_of_double(double v) {
  AXON_CHECK(std::isfinite(v)) << "not a finite constant";
  z3::context& c = S().ctx();
  if (v == 0) return c.real_val(0);
  int e = 0;
  double f = std::frexp(v, &e);  // v = f * 2^e, 0.5 <= |f| < 1
  int64_t m = static_cast<int64_t>(std::ldexp(f, 53));
  e -= 53;
  while (m % 2 == 0) {
    m /= 2;
    ++e;
  }
  z3::expr p = c.real_val(1), two = c.real_val(2);
  for (int k = 0; k < std::abs(e); ++k) p = simp(p * two);
  z3::expr mm = c.real_val(static_cast<int64_t>(m));
  return e >= 0 ? simp(mm * p) : simp(mm / p);
}

PolyRef constant(const z3::expr& coef) {
  if (coef_is_zero(coef)) return finish_poly({});
  Monomial m{coef, {}, {}};
  m.id = S().intern("M{}");
  return finish_poly({std::move(m)});
}
PolyRef constant(int64_t v) { return constant(rational(v)); }
PolyRef zero() { return finish_poly({}); }

PolyRef atom_poly(AtomRef a) { return make_monomial(rational(1), {}, {std::move(a)}); }

PolyRef index_value(const SymIndex& i) {
  PolyRef p = constant(i.constant());
  for (const auto& [name, c] : i.terms()) {
    Atom a{AtomKind::Index, name, {}, {}, nullptr, {}};
    p = add(p, scale(atom_poly(finish_atom(std::move(a))), rational(c)));
  }
  return p;
}

PolyRef param(const std::string& name, const std::vector<SymIndex>& index) {
  return atom_poly(finish_atom(Atom{AtomKind::Param, name, index, {}, nullptr, {}}));
}

// ---- arithmetic

PolyRef add(const PolyRef& a, const PolyRef& b) {
  if (a->terms.empty()) return b;
  if (b->terms.empty()) return a;
  std::vector<Monomial> t = a->terms;
  t.insert(t.end(), b->terms.begin(), b->terms.end());
  return finish_poly(std::move(t));
}

PolyRef scale(const PolyRef& a, const z3::expr& coef) {
  if (coef_is_zero(coef)) return zero();
  if (coef_is_one(coef)) return a;
  std::vector<Monomial> t = a->terms;
  for (Monomial& m : t) m.coef = coef_mul(m.coef, coef);
  return finish_poly(std::move(t));
}

PolyRef neg(const PolyRef& a) { return scale(a, rational(-1)); }
PolyRef sub(const PolyRef& a, const PolyRef& b) { return add(a, neg(b)); }

PolyRef mul(const PolyRef& a, const PolyRef& b) {
  z3::expr c = rational(0);
  if (is_constant(a, &c)) return scale(b, c);
  if (is_constant(b, &c)) return scale(a, c);
  PolyRef out = zero();
  for (const Monomial& x : a->terms)
    for (const Monomial& y : b->terms) out = add(out, mul_monomials(x, y));
  return out;
}

PolyRef recip(const PolyRef& a) {
  z3::expr c = rational(0);
  if (is_constant(a, &c) && !coef_is_zero(c)) return constant(simp(1 / c));
  // 1 / (c * exp(x)) = (1/c) * exp(-x), since exp(x) * exp(-x) = exp(0) = 1.
  const AxiomSet& ax = S().axioms();
  if (ax.has(Axiom::ExpOfSum) && ax.has(Axiom::ExpZero) && a->terms.size() == 1) {
    const Monomial& m = a->terms[0];
    if (m.binders.empty() && m.factors.size() == 1 && m.factors[0]->kind == AtomKind::Fn &&
        m.factors[0]->name == "exp")
      return scale(fn("exp", {neg(m.factors[0]->args[0])}), simp(1 / m.coef));
  }
  return atom_poly(finish_atom(Atom{AtomKind::Recip, "", {}, {a}, nullptr, {}}));
}

PolyRef fn(const std::string& name, const std::vector<PolyRef>& args) {
  const AxiomSet& ax = S().axioms();
  if (name == "exp" && ax.has(Axiom::ExpZero) && is_zero(args[0])) return constant(1);
  if (name == "log" && ax.has(Axiom::LogOfExp) && args[0]->terms.size() == 1) {
    const Monomial& m = args[0]->terms[0];
    if (coef_is_one(m.coef) && m.binders.empty() && m.factors.size() == 1 &&
        m.factors[0]->kind == AtomKind::Fn && m.factors[0]->name == "exp")
      return m.factors[0]->args[0];
  }
  // tanh(-a) = -tanh(a): keep the argument whose first monomial is positive.
  if (name == "tanh" && ax.has(Axiom::TanhOdd) && !args[0]->terms.empty() &&
      coef_sign(args[0]->terms[0].coef) < 0)
    return neg(fn("tanh", {neg(args[0])}));
  return atom_poly(finish_atom(Atom{AtomKind::Fn, name, {}, args, nullptr, {}}));
}

PolyRef ite(const CondRef& c, const PolyRef& a, const PolyRef& b) {
  if (c->kind == CondKind::True) return a;
  if (c->kind == CondKind::False) return b;
  if (a->id == b->id) return a;
  return atom_poly(finish_atom(Atom{AtomKind::Ite, "", {}, {a, b}, c, {}}));
}

PolyRef sum_over(const std::vector<Binder>& binders, const PolyRef& body) {
  Names bn = binder_names(binders);
  PolyRef out = zero();
  for (const Monomial& m0 : body->terms) {
    Monomial m = rename_binders(m0, bn);
    std::vector<Binder> bs = binders;
    bs.insert(bs.end(), m.binders.begin(), m.binders.end());
    out = add(out, make_monomial(m.coef, bs, m.factors));
  }
  return out;
}

PolyRef extremum_over(AtomKind kind, const std::vector<Binder>& binders, const PolyRef& body) {
  AXON_CHECK(kind == AtomKind::Max || kind == AtomKind::Min) << "extremum kind";
  std::vector<Binder> kept;
  for (const Binder& b : binders)
    if (contains(body->free, b.var)) kept.push_back(b);
  if (kept.empty()) return body;  // the max of a constant over a non-empty range
  // max_k max_l f = max_{k,l} f
  if (body->terms.size() == 1) {
    const Monomial& m = body->terms[0];
    if (coef_is_one(m.coef) && m.binders.empty() && m.factors.size() == 1 && m.factors[0]->kind == kind) {
      std::vector<Binder> all = kept;
      all.insert(all.end(), m.factors[0]->binders.begin(), m.factors[0]->binders.end());
      kept = all;
      return extremum_over(kind, kept, m.factors[0]->args[0]);
    }
  }
  std::sort(kept.begin(), kept.end(), [](const Binder& a, const Binder& b) { return a.var < b.var; });
  return atom_poly(finish_atom(Atom{kind, "", {}, {body}, nullptr, kept}));
}

// ---- conditions

CondRef cond_true() { return finish_cond(Cond{CondKind::True, nullptr, {}, {}}); }
CondRef cond_false() { return finish_cond(Cond{CondKind::False, nullptr, {}, {}}); }

namespace {
CondRef decided(bool v) { return v ? cond_true() : cond_false(); }
bool holds(CondKind k, int sign) {
  switch (k) {
    case CondKind::RealLt: case CondKind::IndexLt: return sign < 0;
    case CondKind::RealLe: case CondKind::IndexLe: return sign <= 0;
    default: return sign == 0;
  }
}
}  // namespace

CondRef real_cmp(CondKind kind, const PolyRef& a, const PolyRef& b) {
  PolyRef d = sub(a, b);
  z3::expr c = rational(0);
  if (is_constant(d, &c)) return decided(holds(kind, coef_sign(c)));
  return finish_cond(Cond{kind, d, {}, {}});
}

CondRef index_cmp(CondKind kind, const SymIndex& a, const SymIndex& b) {
  SymIndex d = a - b;
  if (d.is_literal()) {
    int64_t v = d.constant();
    return decided(holds(kind, v < 0 ? -1 : v > 0 ? 1 : 0));
  }
  ProofContext& s = S();
  z3::expr z = s.to_z3(d);
  z3::expr claim = kind == CondKind::IndexLt ? z < 0 : kind == CondKind::IndexLe ? z <= 0 : z == 0;
  std::vector<std::string> vars;
  for (const auto& kv : d.terms()) vars.push_back(kv.first);
  std::vector<z3::expr> facts = s.range_facts(vars);
  if (s.check(claim, facts) == Verdict::Valid) return cond_true();
  if (s.check(!claim, facts) == Verdict::Valid) return cond_false();
  return finish_cond(Cond{kind, nullptr, d, {}});
}

CondRef cond_and(const CondRef& a, const CondRef& b) {
  if (a->kind == CondKind::False || b->kind == CondKind::False) return cond_false();
  if (a->kind == CondKind::True) return b;
  if (b->kind == CondKind::True) return a;
  if (a->id == b->id) return a;
  return finish_cond(Cond{CondKind::And, nullptr, {}, {a, b}});
}

CondRef cond_or(const CondRef& a, const CondRef& b) {
  if (a->kind == CondKind::True || b->kind == CondKind::True) return cond_true();
  if (a->kind == CondKind::False) return b;
  if (b->kind == CondKind::False) return a;
  if (a->id == b->id) return a;
  return finish_cond(Cond{CondKind::Or, nullptr, {}, {a, b}});
}

CondRef cond_not(const CondRef& a) {
  if (a->kind == CondKind::True) return cond_false();
  if (a->kind == CondKind::False) return cond_true();
  if (a->kind == CondKind::Not) return a->args[0];
  return finish_cond(Cond{CondKind::Not, nullptr, {}, {a}});
}

// ---- queries

bool is_zero(const PolyRef& p) { return p->terms.empty(); }

bool is_constant(const PolyRef& p, z3::expr* coef) {
  if (p->terms.empty()) {
    if (coef) *coef = rational(0);
    return true;
  }
  if (p->terms.size() != 1 || !p->terms[0].binders.empty() || !p->terms[0].factors.empty()) return false;
  if (coef) *coef = p->terms[0].coef;
  return true;
}

std::string rational_str(const z3::expr& coef) {
  return Z3_get_numeral_string(coef.ctx(), coef);
}

namespace {
std::string binders_text(const std::vector<Binder>& bs) {
  std::string s;
  for (const Binder& b : bs) s += (s.empty() ? "" : ", ") + b.var + " < " + b.extent.str();
  return s;
}
}  // namespace

std::string to_string(const PolyRef& p) {
  if (p->terms.empty()) return "0";
  std::string s;
  for (const Monomial& m : p->terms) {
    std::string f;
    for (const AtomRef& a : m.factors) f += (f.empty() ? "" : " * ") + to_string(a);
    bool one = coef_is_one(m.coef);
    std::string c = one ? "" : rational_str(m.coef);
    std::string body = f.empty() ? (one ? "1" : c) : (one ? f : c + " * " + f);
    if (!m.binders.empty()) body = "sum_{" + binders_text(m.binders) + "}(" + body + ")";
    s += (s.empty() ? "" : " + ") + body;
  }
  return s;
}

std::string to_string(const AtomRef& a) {
  switch (a->kind) {
    case AtomKind::Param: {
      std::string s = a->name + "[";
      for (size_t i = 0; i < a->index.size(); ++i) s += (i ? ", " : "") + a->index[i].str();
      return s + "]";
    }
    case AtomKind::Index: return a->name;
    case AtomKind::Fn: {
      std::string s = a->name + "(";
      for (size_t i = 0; i < a->args.size(); ++i) s += (i ? ", " : "") + to_string(a->args[i]);
      return s + ")";
    }
    case AtomKind::Recip: return "1/(" + to_string(a->args[0]) + ")";
    case AtomKind::Ite:
      return "(" + to_string(a->cond) + " ? " + to_string(a->args[0]) + " : " + to_string(a->args[1]) + ")";
    case AtomKind::Max: return "max_{" + binders_text(a->binders) + "}(" + to_string(a->args[0]) + ")";
    case AtomKind::Min: return "min_{" + binders_text(a->binders) + "}(" + to_string(a->args[0]) + ")";
  }
  return "?";
}

std::string to_string(const CondRef& c) {
  switch (c->kind) {
    case CondKind::True: return "true";
    case CondKind::False: return "false";
    case CondKind::RealLt: return to_string(c->poly) + " < 0";
    case CondKind::RealLe: return to_string(c->poly) + " <= 0";
    case CondKind::RealEq: return to_string(c->poly) + " == 0";
    case CondKind::IndexLt: return c->index.str() + " < 0";
    case CondKind::IndexLe: return c->index.str() + " <= 0";
    case CondKind::IndexEq: return c->index.str() + " == 0";
    case CondKind::And: return "(" + to_string(c->args[0]) + " and " + to_string(c->args[1]) + ")";
    case CondKind::Or: return "(" + to_string(c->args[0]) + " or " + to_string(c->args[1]) + ")";
    case CondKind::Not: return "not " + to_string(c->args[0]);
  }
  return "?";
}

// ---- substitution

namespace {
class Substituter {
 public:
  explicit Substituter(const std::map<std::string, SymIndex>& by) : by_(by) {}

  PolyRef poly(const PolyRef& p) {
    if (!touches(p->free) && !renames_binders(p)) return p;
    PolyRef out = zero();
    for (const Monomial& m : p->terms) {
      PolyRef body = constant(m.coef);
      for (const AtomRef& a : m.factors) body = mul(body, atom(a));
      out = add(out, sum_over(binders(m.binders), body));
    }
    return out;
  }

  PolyRef atom(const AtomRef& a) {
    switch (a->kind) {
      case AtomKind::Param: {
        std::vector<SymIndex> idx;
        for (const SymIndex& i : a->index) idx.push_back(i.substitute(by_));
        return param(a->name, idx);
      }
      case AtomKind::Index: {
        auto it = by_.find(a->name);
        return it == by_.end() ? atom_poly(a) : index_value(it->second);
      }
      case AtomKind::Fn: {
        std::vector<PolyRef> args;
        for (const PolyRef& p : a->args) args.push_back(poly(p));
        return fn(a->name, args);
      }
      case AtomKind::Recip: return recip(poly(a->args[0]));
      case AtomKind::Ite: return ite(cond(a->cond), poly(a->args[0]), poly(a->args[1]));
      case AtomKind::Max:
      case AtomKind::Min: return extremum_over(a->kind, binders(a->binders), poly(a->args[0]));
    }
    return atom_poly(a);
  }

  CondRef cond(const CondRef& c) {
    switch (c->kind) {
      case CondKind::True:
      case CondKind::False: return c;
      case CondKind::RealLt:
      case CondKind::RealLe:
      case CondKind::RealEq: return real_cmp(c->kind, poly(c->poly), zero());
      case CondKind::IndexLt:
      case CondKind::IndexLe:
      case CondKind::IndexEq: return index_cmp(c->kind, c->index.substitute(by_), SymIndex());
      case CondKind::And: return cond_and(cond(c->args[0]), cond(c->args[1]));
      case CondKind::Or: return cond_or(cond(c->args[0]), cond(c->args[1]));
      case CondKind::Not: return cond_not(cond(c->args[0]));
    }
    return c;
  }

 private:
  bool touches(const Names& free) const {
    return std::any_of(free.begin(), free.end(), [&](const std::string& n) { return by_.count(n) != 0; });
  }
  bool renames_binders(const PolyRef& p) const {
    for (const Monomial& m : p->terms)
      for (const Binder& b : m.binders)
        if (by_.count(b.var)) return true;
    return false;
  }
  // A binder named in the map is renamed (the map must send it to a variable).
  std::vector<Binder> binders(const std::vector<Binder>& bs) const {
    std::vector<Binder> out;
    for (const Binder& b : bs) {
      auto it = by_.find(b.var);
      if (it == by_.end()) {
        out.push_back(b);
        continue;
      }
      std::string v = it->second.single_var();
      AXON_CHECK(!v.empty()) << "a summation variable can only be renamed";
      out.push_back({v, b.extent});
    }
    return out;
  }
  const std::map<std::string, SymIndex>& by_;
};
}  // namespace

PolyRef substitute(const PolyRef& p, const std::map<std::string, SymIndex>& by) {
  return Substituter(by).poly(p);
}

}  // namespace axon::verify::smt
