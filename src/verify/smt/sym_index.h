// SymIndex: the index type I of element_def.h for the SMT encoding.
//
// A SymIndex is an affine integer form over named integer variables,
//     constant + sum_k coef_k * name_k,
// where a name is either a symbolic size ("M", "K") or an index variable
// (an output coordinate or a summation variable) whose range the current
// ProofContext knows. Keeping the form affine and canonical (terms sorted by name)
// makes two accesses to the same element print the same, which is what lets
// the normaliser recognise equal terms without asking the solver.
//
// Graphs are built at placeholder sizes (proof_context.h). The constructor from an
// integer turns a placeholder back into its symbol, so that the offsets,
// strides and extents element_def.h derives from concrete shapes come out
// symbolic: SymIndex(int64_t{P_K}) is K, SymIndex(int64_t{P_K + P_R}) is K + R.
//
// * and / and % follow element_def.h's contract (floor semantics on
// non-negative values). Products of non-literals are kept as polynomial
// terms while the arithmetic runs, because Reshape's row-major formula
// multiplies indices by symbolic strides (o0*S + o1); a division by c, a
// monomial or a sum of monomials with positive coefficients (N1 + N2), folds exactly when the dividend is c*q + r with 0 <= r < c
// provable from the variables' ranges (each term of r bounded by its index
// variable's extent, and c - 1 minus the bounds a polynomial with
// non-negative coefficients in the sizes, which are >= 1). What remains
// after element_def.h is done must be affine: terms() refuses otherwise, and
// so do divisions that do not fold (a reshape that merges or splits symbolic
// axes). Nothing is approximated.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace axon::verify::smt {

class SymIndex {
 public:
  /// The literal 0.
  SymIndex() = default;
  /// A literal, or the symbolic size it is the placeholder of (see proof_context.h).
  explicit SymIndex(int64_t value);
  /// A literal, never decoded.
  static SymIndex literal(int64_t value);
  /// The variable `name` with coefficient 1.
  static SymIndex var(const std::string& name);

  bool is_literal() const { return terms_.empty() && products_.empty(); }
  bool is_affine() const { return products_.empty(); }
  /// Only meaningful when is_literal(); otherwise the constant part.
  int64_t constant() const { return constant_; }
  /// The linear terms; unsupported (a Diagnostic) when the form is not affine.
  const std::map<std::string, int64_t>& terms() const;
  bool mentions(const std::string& name) const { return terms_.count(name) != 0; }
  /// The single variable when this is exactly `1 * name`, else "".
  std::string single_var() const;

  /// Canonical text: "K + 2*N + 3", "r.4 + K", "-1".
  std::string str() const;
  bool operator==(const SymIndex& o) const {
    return constant_ == o.constant_ && terms_ == o.terms_ && products_ == o.products_;
  }
  bool operator!=(const SymIndex& o) const { return !(*this == o); }

  /// Replaces variables by forms.
  SymIndex substitute(const std::map<std::string, SymIndex>& by) const;

  friend SymIndex operator+(const SymIndex& a, const SymIndex& b);
  friend SymIndex operator-(const SymIndex& a, const SymIndex& b);
  friend SymIndex operator*(const SymIndex& a, const SymIndex& b);
  friend SymIndex operator/(const SymIndex& a, const SymIndex& b);
  friend SymIndex operator%(const SymIndex& a, const SymIndex& b);

 private:
  using Monomial = std::vector<std::string>;  // sorted names, repeats are powers
  using Polynomial = std::map<Monomial, int64_t>;
  Polynomial polynomial() const;
  static SymIndex of(const Polynomial& p);
  /// a = b*q + r with 0 <= r < b shown from the ranges; false when not shown.
  static bool divide(const SymIndex& a, const SymIndex& b, SymIndex* q, SymIndex* r);
  SymIndex scaled(int64_t c) const;
  std::map<std::string, int64_t> terms_;       // degree 1; coefficients non-zero
  std::map<Monomial, int64_t> products_;       // degree >= 2; coefficients non-zero
  int64_t constant_ = 0;
};

}  // namespace axon::verify::smt
