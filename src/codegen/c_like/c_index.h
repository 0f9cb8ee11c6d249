// CIndex: the index type I of element_def.h for code generators that print C.
//
// A CIndex is an integer expression kept as an affine form over "atoms",
//     constant + sum_k coef_k * atom_k,
// where an atom is a loop variable or a parenthesised opaque term such as
// "(i0 / 6)". Each atom carries the range of values it can take, so that the
// arithmetic folds what element_def.h's generic formulas leave behind:
//   - 0*x, x+0, x*1, products of literals, like terms;
//   - (k*q + r) / c and % c when k divides c and 0 <= r < k: the remainder
//     cannot carry, so the result is q / (c/k), resp. (q % (c/k))*k + r;
//   - (x / cn)*cn + ((x / c) % n)*c = (x / c)*c, which turns Reshape's
//     unflatten-then-flatten back into the plain row-major offset.
// Folding is exact: a rewrite only happens where both sides agree at every
// point of the atoms' ranges.
//
// Division and remainder follow element_def.h's contract (floor semantics on
// non-negative values); the printed C uses / and %, which agree there.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace axon::codegen {

class CIndex {
 public:
  /// The literal 0.
  CIndex() = default;
  /// A literal.
  explicit CIndex(int64_t value) : constant_(value) {}
  /// A loop variable named `name` taking values in [lo, hi].
  static CIndex var(const std::string& name, int64_t lo, int64_t hi);

  bool is_constant() const { return terms_.empty(); }
  /// The literal's value; only meaningful when is_constant().
  int64_t constant() const { return constant_; }
  /// Smallest and largest value over the atoms' ranges; false when unknown.
  bool range(int64_t* lo, int64_t* hi) const;

  /// The C expression, e.g. "i0 * 1024 + i1 + 3".
  std::string str() const;

  friend CIndex operator+(const CIndex& a, const CIndex& b);
  friend CIndex operator-(const CIndex& a, const CIndex& b);
  friend CIndex operator*(const CIndex& a, const CIndex& b);
  friend CIndex operator/(const CIndex& a, const CIndex& b);
  friend CIndex operator%(const CIndex& a, const CIndex& b);

 private:
  struct Atom {
    /// An opaque term of unknown range.
    explicit Atom(std::string t) : text(std::move(t)) {}
    /// A term taking values in [l, h].
    Atom(std::string t, int64_t l, int64_t h) : text(std::move(t)), bounded(true), lo(l), hi(h) {}
    std::string text;
    bool bounded = false;
    int64_t lo = 0, hi = 0;
    // For "(num / den)" and "(num % den)" with a literal den > 0 and num >= 0:
    // op is '/' or '%', so that the pair can fold back into num.
    char op = 0;
    std::shared_ptr<const CIndex> num;
    int64_t den = 0;
    bool operator==(const Atom& o) const { return text == o.text; }
  };
  struct Term {
    Atom atom;
    int64_t coef = 0;
  };

  static CIndex of_atom(Atom a);
  static CIndex div_mod_atom(char op, const CIndex& num, int64_t den, int64_t lo, int64_t hi);
  /// Rewrites (x / (c*n)) * (c*n)*k + ((x / c) % n) * c*k into (x / c) * c*k
  /// (and, for c = 1, x*k), once per call; operator+ calls it after merging.
  void fold_div_mod_pairs();
  /// Splits a = c*q + rest: q collects the terms whose coefficients c divides
  /// (and the constant's quotient), rest the others and the remainder in [0, c).
  static void split_multiples(const CIndex& a, int64_t c, CIndex* q, CIndex* rest);
  /// Looks for a divisor k > 1 of c with a = k*q + rest and 0 <= rest < k,
  /// largest first; then a / c = q / (c/k) and a % c = (q % (c/k))*k + rest.
  static bool split_small_remainder(const CIndex& a, int64_t c, int64_t* k, CIndex* q, CIndex* rest);
  CIndex scaled(int64_t c) const;
  /// The expression as an operand of a binary C operator (parenthesised if needed).
  std::string operand_str() const;

  std::vector<Term> terms_;  // in order of first appearance; coefficients non-zero
  int64_t constant_ = 0;
};

}  // namespace axon::codegen
