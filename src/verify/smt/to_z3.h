// From normal forms to Z3 formulas, and the closure classes that make sums
// and maxima first-order.
//
// A closure is a summation monomial (SUM_B f1 * ... * fm, without its
// coefficient) or a MAX/MIN atom, seen as a function of its free index
// variables (its parameters). Closures are grouped into classes: closure u
// joins the class of representative c when, for some bijection of the
// parameters and of the binders that preserves their extents, the solver
// proves body_u = body_c at every point of the ranges. Each class is an
// uninterpreted function T_c : Int^params -> Real, and every closure of the
// class is encoded as T_c applied to its own parameters.
//
// Soundness: read T_c as "the representative's sum (max) as a total function
// of its parameters". A closure placed in the class has that value at its
// parameters, because its body equals the representative's pointwise over
// the whole range of its binders; so any identity Z3 proves with T_c left
// uninterpreted holds for the real sums. The converse fails (two equal sums
// may land in different classes), which only costs completeness.
//
// A closure's class is settled only after the class of every closure nested
// in its body (a sum inside an exp inside another sum's factors): comparing
// bodies then only looks classes up. Classifying outer closures first would
// compare an inner closure with a representative whose body contains it,
// which encodes that body, which asks for the inner closure's class again.
//
// Each query gets the ranges of the index variables it mentions, sizes >= 1,
// and ground instances of the opted-in axioms for the function applications
// it contains.
#pragma once

#include <z3++.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "verify/smt/normal_form.h"
#include "verify/smt/proof_context.h"

namespace axon::verify::smt {

class Z3Translator {
 public:
  explicit Z3Translator(ProofContext& s) : s_(s) {}
  using Env = std::map<std::string, z3::expr>;

  /// Asks whether a == b at every point of the index variables' ranges; on
  /// Invalid, *model holds the solver's (abstract) counterexample.
  Verdict prove_equal(const PolyRef& a, const PolyRef& b, z3::model* model);

  /// The values of the sizes and of the index variables named in `vars`.
  std::string describe_model(const z3::model& m, const std::vector<std::string>& vars);
  /// The sizes in a model, when all are given.
  std::map<std::string, int64_t> model_sizes(const z3::model& m);

  int class_count() const { return static_cast<int>(classes_.size()); }

 private:
  struct Query {
    std::vector<z3::expr> facts;
    std::set<std::string> raw_vars;
  };
  struct Closure {
    AtomKind kind;  // Max, Min, or Param standing for a sum
    int id;
    std::vector<Binder> binders;
    std::vector<AtomRef> factors;  // sums
    PolyRef body;                  // max, min
    std::vector<std::string> params;
  };
  struct Class {
    Closure rep;
    z3::func_decl fn;
  };

  z3::expr poly(const PolyRef& p, const Env& env, Query& q);
  z3::expr monomial_body(const std::vector<AtomRef>& factors, const Env& env, Query& q);
  z3::expr atom(const AtomRef& a, const Env& env, Query& q);
  z3::expr cond(const CondRef& c, const Env& env, Query& q);
  z3::expr var(const std::string& name, const Env& env, Query& q);
  z3::expr index(const SymIndex& i, const Env& env, Query& q);
  z3::expr closure_value(const Closure& c, const Env& env, Query& q);
  z3::expr closure_body(const Closure& c, const Env& env, Query& q);
  int class_of(const Closure& c);
  /// Classifies every closure nested in `c`'s body, innermost first.
  void classify_nested(const Closure& c);
  void classify_in(const PolyRef& p);
  void classify_in(const AtomRef& a);
  void classify_in(const CondRef& k);
  bool same_class(const Closure& u, const Closure& rep, std::vector<int>* param_perm);
  std::vector<z3::expr> facts_of(Query& q);
  z3::func_decl function(const std::string& name, int arity, bool int_args);

  ProofContext& s_;
  std::vector<Class> classes_;
  std::map<std::pair<int, int>, int> class_by_closure_;  // (kind, id) -> class
  // (kind, id) -> for each parameter, its position in the class function
  std::map<std::pair<int, int>, std::vector<int>> param_perm_;
  std::map<std::string, z3::func_decl> functions_;
  std::set<std::pair<int, int>> classifying_;  // closures whose class_of is on the stack
  int next_const_ = 0;
};

}  // namespace axon::verify::smt
