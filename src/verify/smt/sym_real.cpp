#include "verify/smt/sym_real.h"

#include <cmath>

#include "support/diagnostic.h"
#include "verify/smt/proof_context.h"

namespace axon::verify::smt {

SymReal::SymReal() : poly_(zero()) {}

PolyRef SymReal::poly() const { return cond_ ? ite(cond_, constant(1), zero()) : poly_; }

CondRef SymReal::cond() const {
  return cond_ ? cond_ : cond_not(real_cmp(CondKind::RealEq, poly_, zero()));
}

SymReal operator+(const SymReal& a, const SymReal& b) { return SymReal(add(a.poly(), b.poly())); }
SymReal operator-(const SymReal& a, const SymReal& b) { return SymReal(sub(a.poly(), b.poly())); }
SymReal operator*(const SymReal& a, const SymReal& b) { return SymReal(mul(a.poly(), b.poly())); }
SymReal operator/(const SymReal& a, const SymReal& b) { return SymReal(mul(a.poly(), recip(b.poly()))); }
SymReal operator-(const SymReal& a) { return SymReal(neg(a.poly())); }

namespace {
SymReal apply(const char* name, const SymReal& a) { return SymReal(fn(name, {a.poly()})); }
}  // namespace

SymReal exp(const SymReal& a) { return apply("exp", a); }
SymReal log(const SymReal& a) { return apply("log", a); }
SymReal sqrt(const SymReal& a) { return apply("sqrt", a); }
SymReal tanh(const SymReal& a) { return apply("tanh", a); }
SymReal sin(const SymReal& a) { return apply("sin", a); }
SymReal cos(const SymReal& a) { return apply("cos", a); }
SymReal floor(const SymReal& a) { return apply("floor", a); }

SymReal abs_of(const SymReal& a) {
  PolyRef x = a.poly();
  return SymReal(ite(real_cmp(CondKind::RealLt, x, zero()), neg(x), x));
}

SymReal pow_of(const SymReal& a, const SymReal& b) {
  z3::expr e = rational(0);
  PolyRef base = a.poly();
  if (is_constant(b.poly(), &e)) {
    // Small integer exponents are products; 1/2 is sqrt.
    for (int64_t n = -8; n <= 8; ++n) {
      if (!e.simplify().is_numeral() || !(e == rational(n)).simplify().is_true()) continue;
      PolyRef p = constant(1);
      for (int64_t k = 0; k < std::abs(n); ++k) p = mul(p, base);
      return SymReal(n < 0 ? recip(p) : p);
    }
    if ((e == rational(1, 2)).simplify().is_true()) return sqrt(a);
  }
  return SymReal(fn("pow", {base, b.poly()}));
}

SymReal lt(const SymReal& a, const SymReal& b) { return SymReal(real_cmp(CondKind::RealLt, a.poly(), b.poly())); }
SymReal le(const SymReal& a, const SymReal& b) { return SymReal(real_cmp(CondKind::RealLe, a.poly(), b.poly())); }
SymReal gt(const SymReal& a, const SymReal& b) { return lt(b, a); }
SymReal ge(const SymReal& a, const SymReal& b) { return le(b, a); }
SymReal eq(const SymReal& a, const SymReal& b) {
  if (a.is_truth() && b.is_truth()) {  // equality of truth values
    CondRef x = a.cond(), y = b.cond();
    return SymReal(cond_or(cond_and(x, y), cond_and(cond_not(x), cond_not(y))));
  }
  return SymReal(real_cmp(CondKind::RealEq, a.poly(), b.poly()));
}
SymReal ne(const SymReal& a, const SymReal& b) { return SymReal(cond_not(eq(a, b).cond())); }
SymReal logical_and(const SymReal& a, const SymReal& b) { return SymReal(cond_and(a.cond(), b.cond())); }
SymReal logical_or(const SymReal& a, const SymReal& b) { return SymReal(cond_or(a.cond(), b.cond())); }
SymReal logical_not(const SymReal& a) { return SymReal(cond_not(a.cond())); }
SymReal is_nan(const SymReal&) { return SymReal(cond_false()); }

SymReal where(const SymReal& c, const SymReal& a, const SymReal& b) {
  if (a.is_truth() && b.is_truth()) {
    CondRef k = c.cond();
    return SymReal(cond_or(cond_and(k, a.cond()), cond_and(cond_not(k), b.cond())));
  }
  return SymReal(ite(c.cond(), a.poly(), b.poly()));
}

SymReal cast_to(ir::DType to, const SymReal& a) {
  switch (to) {
    case ir::DType::Bool: return SymReal(a.cond());
    case ir::DType::F64: return SymReal(a.poly());
    default: break;
  }
  // A value already rounded the same way is not rounded again.
  PolyRef x = a.poly();
  std::string name = std::string(ir::is_float(to) ? "round_" : "trunc_") + ir::dtype_name(to);
  if (x->terms.size() == 1 && x->terms[0].binders.empty() && x->terms[0].factors.size() == 1 &&
      (x->terms[0].coef == rational(1)).simplify().is_true() && x->terms[0].factors[0]->kind == AtomKind::Fn &&
      x->terms[0].factors[0]->name == name)
    return SymReal(x);
  return SymReal(fn(name, {x}));
}

SymReal make_scalar(double value, const SymReal&) {
  if (!std::isfinite(value))
    AXON_UNSUPPORTED() << "the constant " << value << " (infinities and NaN are not modelled over the reals)";
  if (value == std::trunc(value) && std::fabs(value) < 1e15) {
    SymIndex i;
    if (ProofContext::current().decode(static_cast<int64_t>(value), &i)) return SymReal(index_value(i));
  }
  return SymReal(constant(rational_of_double(value)));
}

}  // namespace axon::verify::smt
