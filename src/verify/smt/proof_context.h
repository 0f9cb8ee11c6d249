// ProofContext: the state one proof shares across the SMT layer.
//
// It owns the Z3 context, the symbolic sizes and their placeholders, the
// index variables in scope with their ranges, the axioms the caller opted
// into, and the solver budget. element_def.h's templates take no context
// argument, so the index and scalar types reach the current one through
// ProofContext::current(), set for the lifetime of a ProofContext object
// (one per thread at a time).
//
// Placeholders: a rewrite over sizes M, K, ... is built as ordinary IR with
// each size set to a placeholder value P_M, P_K, ... The placeholders lie in
// [10^4, 10^5) and are spaced so that every sum of at most three of them,
// plus a literal offset below 64 in magnitude, is told apart from every other;
// products of two placeholders are far above that range. So a concrete
// integer that element_def.h derives from the placeholder shapes decodes back
// to exactly one affine form over the sizes, or is reported as unsupported.
// Outside that range, a literal multiple c < 5000 of a product of one to
// three placeholders (a derived size 8 P_N, a reshape's stride P_N P_D)
// decodes to that multiple of the product of the sizes when it is the only
// such reading; every product of at most three placeholders is distinct.
// Literal sizes in a rewrite must stay below 5000.
#pragma once

#include <z3++.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "verify/smt/sym_index.h"

namespace axon::verify::smt {

/// The axioms about the uninterpreted functions that a proof may use. None
/// is assumed unless asked for.
enum class Axiom : uint32_t {
  ExpOfSum = 1u << 0,    // exp(a + b) = exp(a) * exp(b)   (products of exps merge)
  ExpZero = 1u << 1,     // exp(0) = 1
  ExpPositive = 1u << 2, // exp(a) > 0
  SqrtSquare = 1u << 3,  // a >= 0  ->  sqrt(a) * sqrt(a) = a  and  sqrt(a) >= 0
  LogOfExp = 1u << 4,    // log(exp(a)) = a
  TanhOdd = 1u << 5,     // tanh(-a) = -tanh(a)
  TanhAsExp = 1u << 6,   // tanh(a) (1 + exp(-2a)) = 1 - exp(-2a), and exp(-2a) > 0
};

class AxiomSet {
 public:
  AxiomSet() = default;
  AxiomSet(std::initializer_list<Axiom> list) {
    for (Axiom a : list) add(a);
  }
  AxiomSet& add(Axiom a) {
    bits_ |= static_cast<uint32_t>(a);
    return *this;
  }
  bool has(Axiom a) const { return (bits_ & static_cast<uint32_t>(a)) != 0; }
  /// ExpOfSum, ExpZero and ExpPositive.
  static AxiomSet exp_rules() { return {Axiom::ExpOfSum, Axiom::ExpZero, Axiom::ExpPositive}; }
  static AxiomSet all() {
    return exp_rules().add(Axiom::SqrtSquare).add(Axiom::LogOfExp).add(Axiom::TanhOdd).add(Axiom::TanhAsExp);
  }
  /// "exp-of-sum, exp-zero" or "none".
  std::string str() const;

 private:
  uint32_t bits_ = 0;
};

/// The placeholder value of the i-th symbolic size (i < kMaxSymbols).
int64_t placeholder_size(int i);
constexpr int kMaxSymbols = 8;

enum class Verdict { Valid, Invalid, Unknown };

class ProofContext {
 public:
  /// `dims`: the symbolic sizes, each an identifier, at most kMaxSymbols.
  ProofContext(std::vector<std::string> dims, AxiomSet axioms, unsigned query_timeout_ms, unsigned budget_ms);
  ~ProofContext();
  ProofContext(const ProofContext&) = delete;
  ProofContext& operator=(const ProofContext&) = delete;

  /// The innermost live context on this thread; an internal error when none.
  static ProofContext& current();
  static bool active();

  z3::context& ctx() { return *ctx_; }
  const AxiomSet& axioms() const { return axioms_; }

  // ---- sizes
  const std::vector<std::string>& dims() const { return dims_; }
  bool is_size(const std::string& name) const;
  /// Each size at its placeholder value.
  std::map<std::string, int64_t> placeholder_sizes() const;
  /// Decodes a concrete integer into an affine form over the sizes, or a
  /// literal multiple of a product of sizes; false when it is none of a small
  /// literal, a placeholder sum and one such multiple.
  bool decode(int64_t value, SymIndex* out) const;

  // ---- index variables
  /// A new index variable ranging over [0, extent).
  std::string fresh_var(const std::string& prefix, const SymIndex& extent);
  /// The extent of an index variable, or null for sizes and unknown names.
  const SymIndex* extent_of(const std::string& var) const;

  // ---- interning: structural keys to small ids (stable within the context)
  int intern(const std::string& key);

  // ---- the solver
  /// Asks whether `claim` follows from `facts`: Valid (the negation is
  /// unsat), Invalid (a model of the negation exists; written to *model when
  /// given) or Unknown (timeout, incompleteness, or budget spent). The query
  /// ends by the query time limit whatever Z3 does (bounded_check.h), so a
  /// proof ends within its budget plus one query's limit.
  Verdict check(const z3::expr& claim, const std::vector<z3::expr>& facts, z3::model* model = nullptr);
  /// The facts that bound the sizes (>= 1) and the named index variables.
  std::vector<z3::expr> range_facts(const std::vector<std::string>& vars);
  z3::expr size_expr(const std::string& name);
  /// `i` as a Z3 integer; variables not in `env` are the constants of their names.
  z3::expr to_z3(const SymIndex& i, const std::map<std::string, z3::expr>* env = nullptr);

  double solver_ms() const { return solver_ms_; }
  int queries() const { return queries_; }
  bool budget_spent() const;
  /// Why the last query that answered Unknown did ("" when none did).
  const std::string& last_unknown() const { return last_unknown_; }

 private:
  std::unique_ptr<z3::context> ctx_;
  std::vector<std::string> dims_;
  AxiomSet axioms_;
  unsigned query_timeout_ms_;
  unsigned budget_ms_;
  std::chrono::steady_clock::time_point start_;
  std::map<std::string, SymIndex> var_extent_;
  std::unordered_map<std::string, int> interned_;
  int next_var_ = 0;
  double solver_ms_ = 0;
  int queries_ = 0;
  std::string last_unknown_;
  ProofContext* outer_ = nullptr;
};

}  // namespace axon::verify::smt
