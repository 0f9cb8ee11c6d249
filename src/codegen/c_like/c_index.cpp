#include "codegen/c_like/c_index.h"

#include <algorithm>

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
  return of_atom(Atom{name, true, lo, hi});
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
  return e;
}

CIndex operator-(const CIndex& a, const CIndex& b) { return a + b.scaled(-1); }

CIndex operator*(const CIndex& a, const CIndex& b) {
  if (a.is_constant()) return b.scaled(a.constant_);
  if (b.is_constant()) return a.scaled(b.constant_);
  CIndex::Atom at{"(" + a.operand_str() + " * " + b.operand_str() + ")"};
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
    return CIndex::of_atom(CIndex::Atom{"(" + a.operand_str() + " / " + b.operand_str() + ")"});
  }
  const int64_t c = b.constant_;
  if (a.is_constant()) return CIndex(floor_div(a.constant_, c));
  if (c == 1) return a;
  CIndex q, rest;
  CIndex::split_multiples(a, c, &q, &rest);
  int64_t lo, hi;
  if (!rest.range(&lo, &hi) || lo < 0)  // C's truncating / would differ from floor: keep it whole
    return CIndex::of_atom(CIndex::Atom{"(" + a.operand_str() + " / " + literal(c) + ")"});
  if (hi < c) return q;  // floor(rest / c) is 0 everywhere
  return q + CIndex::of_atom(CIndex::Atom{"(" + rest.operand_str() + " / " + literal(c) + ")", true,
                                          lo / c, hi / c});
}

CIndex operator%(const CIndex& a, const CIndex& b) {
  if (!b.is_constant() || b.constant_ <= 0) {
    AXON_CHECK(!(b.is_constant() && b.constant_ == 0)) << "index remainder by zero: " << a.str() << " % 0";
    return CIndex::of_atom(CIndex::Atom{"(" + a.operand_str() + " % " + b.operand_str() + ")"});
  }
  const int64_t c = b.constant_;
  if (a.is_constant()) return CIndex(floor_mod(a.constant_, c));
  if (c == 1) return CIndex();
  CIndex q, rest;
  CIndex::split_multiples(a, c, &q, &rest);
  int64_t lo, hi;
  if (!rest.range(&lo, &hi) || lo < 0)
    return CIndex::of_atom(CIndex::Atom{"(" + a.operand_str() + " % " + literal(c) + ")"});
  if (hi < c) return rest;  // already a remainder
  return CIndex::of_atom(CIndex::Atom{"(" + rest.operand_str() + " % " + literal(c) + ")", true, 0,
                                      std::min(hi, c - 1)});
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
