#include "codegen/c_like/c_index.h"

#include <algorithm>
#include <numeric>

#include "support/diagnostic.h"

namespace axon::codegen {

namespace {
// Floor division and remainder, so that folded literals agree with the
// definition for every sign (the printed C only meets non-negative values).
int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

std::string literal(int64_t v) { return std::to_string(v); }
}  // namespace

CIndex CIndex::var(const std::string& name, int64_t lo, int64_t hi) {
  return of_atom(Atom(name, lo, hi));
}

CIndex CIndex::of_atom(Atom a) {
  CIndex e;
  e.terms_.push_back(Term{std::move(a), 1});
  return e;
}

bool CIndex::range(int64_t* lo, int64_t* hi) const {
  int64_t l = constant_, h = constant_;
  for (const Term& t : terms_) {
    if (!t.atom.bounded) return false;
    int64_t a, b;
    if (__builtin_mul_overflow(t.coef, t.atom.lo, &a) || __builtin_mul_overflow(t.coef, t.atom.hi, &b))
      return false;
    if (a > b) std::swap(a, b);
    if (__builtin_add_overflow(l, a, &l) || __builtin_add_overflow(h, b, &h)) return false;
  }
  *lo = l;
  *hi = h;
  return true;
}

CIndex CIndex::scaled(int64_t c) const {
  if (c == 0) return CIndex();
  CIndex e = *this;
  for (Term& t : e.terms_) t.coef *= c;
  e.constant_ *= c;
  return e;
}

std::string CIndex::str() const {
  if (terms_.empty()) return literal(constant_);
  std::string s;
  for (size_t i = 0; i < terms_.size(); ++i) {
    const Term& t = terms_[i];
    int64_t mag = t.coef < 0 ? -t.coef : t.coef;
    if (i == 0) s += t.coef < 0 ? "-" : "";
    else s += t.coef < 0 ? " - " : " + ";
    s += t.atom.text;
    if (mag != 1) s += " * " + literal(mag);
  }
  if (constant_ > 0) s += " + " + literal(constant_);
  if (constant_ < 0) s += " - " + literal(-constant_);
  return s;
}

std::string CIndex::operand_str() const {
  if (terms_.empty()) return constant_ < 0 ? "(" + literal(constant_) + ")" : literal(constant_);
  if (terms_.size() == 1 && terms_[0].coef == 1 && constant_ == 0) return terms_[0].atom.text;
  return "(" + str() + ")";
}

CIndex operator+(const CIndex& a, const CIndex& b) {
  CIndex e = a;
  e.constant_ += b.constant_;
  for (const CIndex::Term& t : b.terms_) {
    auto it = std::find_if(e.terms_.begin(), e.terms_.end(),
                           [&](const CIndex::Term& u) { return u.atom == t.atom; });
    if (it == e.terms_.end()) {
      e.terms_.push_back(t);
    } else if ((it->coef += t.coef) == 0) {
      e.terms_.erase(it);
    }
  }
  e.fold_div_mod_pairs();
  return e;
}

CIndex operator-(const CIndex& a, const CIndex& b) { return a + b.scaled(-1); }

CIndex operator*(const CIndex& a, const CIndex& b) {
  if (a.is_constant()) return b.scaled(a.constant_);
  if (b.is_constant()) return a.scaled(b.constant_);
  CIndex::Atom at("(" + a.operand_str() + " * " + b.operand_str() + ")");
  int64_t al, ah, bl, bh;
  if (a.range(&al, &ah) && b.range(&bl, &bh) && al >= 0 && bl >= 0 &&
      !__builtin_mul_overflow(ah, bh, &at.hi)) {
    at.bounded = true;
    at.lo = al * bl;
  }
  return CIndex::of_atom(std::move(at));
}

CIndex operator/(const CIndex& a, const CIndex& b) {
  if (!b.is_constant() || b.constant_ <= 0) {
    AXON_CHECK(!(b.is_constant() && b.constant_ == 0)) << "index division by zero: " << a.str() << " / 0";
    return CIndex::of_atom(CIndex::Atom("(" + a.operand_str() + " / " + b.operand_str() + ")"));
  }
  const int64_t c = b.constant_;
  if (a.is_constant()) return CIndex(floor_div(a.constant_, c));
  if (c == 1) return a;
  CIndex q, rest;
  int64_t k;
  if (CIndex::split_small_remainder(a, c, &k, &q, &rest)) return k == c ? q : q / CIndex(c / k);
  // Otherwise the quotient stays whole, so that fold_div_mod_pairs can find it again.
  int64_t lo, hi;
  if (!a.range(&lo, &hi) || lo < 0)
    return CIndex::of_atom(CIndex::Atom("(" + a.operand_str() + " / " + literal(c) + ")"));
  return CIndex::div_mod_atom('/', a, c, lo / c, hi / c);
}

CIndex operator%(const CIndex& a, const CIndex& b) {
  if (!b.is_constant() || b.constant_ <= 0) {
    AXON_CHECK(!(b.is_constant() && b.constant_ == 0)) << "index remainder by zero: " << a.str() << " % 0";
    return CIndex::of_atom(CIndex::Atom("(" + a.operand_str() + " % " + b.operand_str() + ")"));
  }
  const int64_t c = b.constant_;
  if (a.is_constant()) return CIndex(floor_mod(a.constant_, c));
  if (c == 1) return CIndex();
  CIndex q, rest;
  int64_t k;
  if (CIndex::split_small_remainder(a, c, &k, &q, &rest))
    return k == c ? rest : (q % CIndex(c / k)) * CIndex(k) + rest;
  int64_t lo, hi;
  if (!a.range(&lo, &hi) || lo < 0)
    return CIndex::of_atom(CIndex::Atom("(" + a.operand_str() + " % " + literal(c) + ")"));
  return CIndex::div_mod_atom('%', a, c, 0, std::min(hi, c - 1));
}

CIndex CIndex::div_mod_atom(char op, const CIndex& num, int64_t den, int64_t lo, int64_t hi) {
  Atom a("(" + num.operand_str() + (op == '/' ? " / " : " % ") + literal(den) + ")", lo, hi);
  a.op = op;
  a.num = std::make_shared<const CIndex>(num);
  a.den = den;
  return of_atom(std::move(a));
}

void CIndex::fold_div_mod_pairs() {
  // A remainder term ((x / c) % n) * m, or (x % n) * m with c = 1, and the
  // quotient (x / (c*n)) * (c*n) * (m / c), however that quotient simplified,
  // add up to (x / c) * m exactly: floor division makes
  //   floor(x / cn) * cn + (floor(x / c) mod n) * c = floor(x / c) * c
  // for every x >= 0 (the atoms are built only for non-negative numerators).
  for (size_t a = 0; a < terms_.size(); ++a) {
    const Atom& mod = terms_[a].atom;
    if (mod.op != '%') continue;
    const CIndex& inner = *mod.num;  // x / c, or x
    const CIndex* x = &inner;
    int64_t c = 1;
    if (inner.terms_.size() == 1 && inner.terms_[0].coef == 1 && inner.constant_ == 0 &&
        inner.terms_[0].atom.op == '/') {
      x = inner.terms_[0].atom.num.get();
      c = inner.terms_[0].atom.den;
    }
    const int64_t m = terms_[a].coef;
    if (m % c != 0) continue;
    const int64_t d = c * mod.den;
    const CIndex quotient = (*x / CIndex(d)) * CIndex(d * (m / c));
    bool present = !quotient.terms_.empty();
    for (const Term& t : quotient.terms_) {
      auto it = std::find_if(terms_.begin(), terms_.end(), [&](const Term& u) { return u.atom == t.atom; });
      present = present && it != terms_.end() && it->coef == t.coef;
    }
    if (!present) continue;
    const CIndex whole = inner * CIndex(m);
    const CIndex remainder = of_atom(mod).scaled(m);
    *this = *this - quotient - remainder + whole;  // may fold further
    return;
  }
}

bool CIndex::split_small_remainder(const CIndex& a, int64_t c, int64_t* k, CIndex* q, CIndex* rest) {
  // Only divisors shared with a coefficient can split anything off.
  std::vector<int64_t> ks = {c};
  for (const Term& t : a.terms_) ks.push_back(std::gcd(c, t.coef < 0 ? -t.coef : t.coef));
  std::sort(ks.rbegin(), ks.rend());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  for (int64_t cand : ks) {
    if (cand <= 1) break;
    split_multiples(a, cand, q, rest);
    int64_t lo, hi;
    if (rest->range(&lo, &hi) && lo >= 0 && hi < cand) {
      *k = cand;
      return true;
    }
  }
  return false;
}

void CIndex::split_multiples(const CIndex& a, int64_t c, CIndex* q, CIndex* rest) {
  *q = CIndex(floor_div(a.constant_, c));
  *rest = CIndex(floor_mod(a.constant_, c));
  for (const Term& t : a.terms_) {
    if (t.coef % c == 0) *q = *q + of_atom(t.atom).scaled(t.coef / c);
    else *rest = *rest + of_atom(t.atom).scaled(t.coef);
  }
}

}  // namespace axon::codegen
