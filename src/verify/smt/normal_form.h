// The normal form of a real-valued term over tensors of symbolic size.
//
// A Poly is a sum of monomials, each
//
//     coef * SUM_{b1 < e1, ..., bn < en}  f1 * f2 * ... * fm
//
// with an exact rational coefficient, zero or more summation binders and a
// multiset of factors (atoms). Sums never appear inside a product: the smart
// constructors below distribute products over sums and lift every summation
// binder to the monomial that contains it, so that
//   - linearity holds by construction: SUM (a + b) = SUM a + SUM b, and
//     c * SUM f = SUM c * f;
//   - nested sums flatten (SUM_k SUM_l f = SUM_{k,l} f), which is also what
//     makes the order of summation irrelevant (Fubini over finite ranges);
//   - a binder that its body does not mention is dropped and its extent
//     becomes a factor (SUM_{k<K} c = K * c).
// Moving a factor "out of" a sum and moving it "into" the sum reach the same
// normal form; which factors depend on a binder is read off the free
// variables every node records.
//
// Atoms are the opaque leaves: an input element X[i, k] (an uninterpreted
// function of affine indices), an index variable or size used as a real, a
// function application (exp, sqrt, ...; uninterpreted), a reciprocal 1/p
// (total, with the solver's unspecified value at zero), a conditional, and a
// max or min over binders (a closure: it cannot be distributed).
//
// Axioms the context opted into act here: with exp-of-sum, the exps of a
// product merge into exp of the sum of their arguments, and 1/exp(a) is
// exp(-a) (with exp-zero); with exp-zero, exp(0) is 1; with log-of-exp,
// log(exp(a)) is a; with tanh-odd, tanh takes the sign out of its argument.
// Positivity of exp and the square of sqrt are facts given to the solver
// (to_z3.h). Nothing else is assumed.
//
// Conditions whose truth depends only on index variables and sizes (the
// selects of a concat, the bounds of a slice) are decided with the solver
// from the ranges of the variables in scope, so that a sum over one tile of a
// concatenated axis sees only the operand that tile reads.
//
// Every node is immutable and interned: `id` identifies its structure
// (with variable names) within the proof context.
#pragma once

#include <z3++.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "verify/smt/sym_index.h"

namespace axon::verify::smt {

struct Atom;
struct Cond;
struct Poly;
using AtomRef = std::shared_ptr<const Atom>;
using CondRef = std::shared_ptr<const Cond>;
using PolyRef = std::shared_ptr<const Poly>;

/// A summation or max variable ranging over [0, extent).
struct Binder {
  std::string var;
  SymIndex extent;
};

struct Monomial {
  z3::expr coef;                 // a rational numeral, never zero
  std::vector<Binder> binders;   // sorted by var
  std::vector<AtomRef> factors;  // sorted by id (repeats are powers)
  int id = -1;                   // of binders and factors, not of coef
  std::vector<std::string> free = {};  // index variables it depends on, sorted
};

struct Poly {
  std::vector<Monomial> terms;  // sorted by monomial id, ids unique
  int id = -1;
  std::vector<std::string> free = {};
};

enum class AtomKind {
  Param,   // name[index...]
  Index,   // the integer variable `name` as a real (an index or a size)
  Fn,      // name(args...): exp log sqrt tanh sin cos floor pow round_<dtype> trunc_<dtype>
  Recip,   // 1 / args[0]
  Ite,     // cond ? args[0] : args[1]
  Max,     // max over binders of args[0]
  Min,     // min over binders of args[0]
};

struct Atom {
  AtomKind kind;
  std::string name;
  std::vector<SymIndex> index;
  std::vector<PolyRef> args;
  CondRef cond;
  std::vector<Binder> binders;
  int id = -1;
  std::vector<std::string> free = {};
};

enum class CondKind {
  True, False,
  RealLt, RealLe, RealEq,     // poly (<, <=, ==) 0
  IndexLt, IndexLe, IndexEq,  // index (<, <=, ==) 0
  And, Or, Not,
};

struct Cond {
  CondKind kind;
  PolyRef poly;
  SymIndex index;
  std::vector<CondRef> args;
  int id = -1;
  std::vector<std::string> free = {};
};

// ---- constants and leaves
z3::expr rational(int64_t num, int64_t den = 1);
/// The exact value of a finite double.
z3::expr rational_of_double(double v);
PolyRef constant(const z3::expr& coef);
PolyRef constant(int64_t v);
PolyRef zero();
PolyRef atom_poly(AtomRef a);
/// An affine index form as a real: sum_k c_k * Index(name_k) + c.
PolyRef index_value(const SymIndex& i);
PolyRef param(const std::string& name, const std::vector<SymIndex>& index);

// ---- arithmetic
PolyRef add(const PolyRef& a, const PolyRef& b);
PolyRef sub(const PolyRef& a, const PolyRef& b);
PolyRef neg(const PolyRef& a);
PolyRef mul(const PolyRef& a, const PolyRef& b);
PolyRef scale(const PolyRef& a, const z3::expr& coef);
PolyRef recip(const PolyRef& a);
PolyRef fn(const std::string& name, const std::vector<PolyRef>& args);
PolyRef ite(const CondRef& c, const PolyRef& a, const PolyRef& b);
/// SUM over `binders` (fresh variables of the proof context, simple extents).
PolyRef sum_over(const std::vector<Binder>& binders, const PolyRef& body);
/// MAX (kind Max) or MIN over `binders`; each extent must be at least 1.
PolyRef extremum_over(AtomKind kind, const std::vector<Binder>& binders, const PolyRef& body);

// ---- conditions
CondRef cond_true();
CondRef cond_false();
/// a (<, <=, ==) b over the reals (kind RealLt, RealLe or RealEq).
CondRef real_cmp(CondKind kind, const PolyRef& a, const PolyRef& b);
/// a (<, <=, ==) b over the integers (kind IndexLt, IndexLe or IndexEq); decided
/// from variable ranges when the solver can.
CondRef index_cmp(CondKind kind, const SymIndex& a, const SymIndex& b);
CondRef cond_and(const CondRef& a, const CondRef& b);
CondRef cond_or(const CondRef& a, const CondRef& b);
CondRef cond_not(const CondRef& a);

// ---- queries
bool is_zero(const PolyRef& p);
/// True (and *coef set) when p has no atoms and no binders.
bool is_constant(const PolyRef& p, z3::expr* coef = nullptr);
/// The rational as "p/q".
std::string rational_str(const z3::expr& coef);
/// Readable text, for counterexamples and debugging.
std::string to_string(const PolyRef& p);
std::string to_string(const AtomRef& a);
std::string to_string(const CondRef& c);

/// Replaces index variables by affine forms, rebuilding through the smart
/// constructors (so conditions are decided again and exps merge again).
PolyRef substitute(const PolyRef& p, const std::map<std::string, SymIndex>& by);

}  // namespace axon::verify::smt
