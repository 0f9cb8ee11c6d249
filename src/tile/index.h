// Index: the integer expressions of the tile IR (loop bounds, element
// indices, view offsets). A tree over loop variables and literals with +, *,
// floor division, remainder and min; subtraction is + (-1)*b.
//
/// Index is also the index type I of ir/element_def.h (it has I(int64_t),
/// +, -, *, /, %), so lowering a graph node instantiates operand_index<Index>
/// and never restates how an op addresses its operands.
///
/// Construction folds what is certain: literal arithmetic, x + 0, x * 1,
/// x * 0, x / 1, x % 1, and collects literals of nested sums. Division and
/// remainder have floor semantics on the non-negative values element_def.h
/// promises; the printers emit C's / and %, which agree there.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace axon::tile {

enum class IndexKind { Const, Var, Add, Mul, Div, Mod, Min };

class Index {
 public:
  /// The literal 0.
  Index();
  /// A literal (implicit: element_def.h writes I(int64_t{0})).
  Index(int64_t value);  // NOLINT(google-explicit-constructor)
  static Index var(const std::string& name);

  IndexKind kind() const;
  bool is_const() const { return kind() == IndexKind::Const; }
  /// The literal's value (Const only).
  int64_t value() const;
  /// The variable's name (Var only).
  const std::string& name() const;
  /// The operands of Add, Mul, Div, Mod, Min.
  Index a() const;
  Index b() const;

  friend Index operator+(const Index& a, const Index& b);
  friend Index operator-(const Index& a, const Index& b);
  friend Index operator*(const Index& a, const Index& b);
  friend Index operator/(const Index& a, const Index& b);
  friend Index operator%(const Index& a, const Index& b);
  friend Index min(const Index& a, const Index& b);

  /// Structural equality.
  bool same_as(const Index& o) const;
  /// True when the variable `v` occurs.
  bool uses(const std::string& v) const;
  /// Every variable replaced by `f(name)` when f returns a value.
  Index substitute(const std::function<std::optional<Index>(const std::string&)>& f) const;
  /// The value at `env` (every variable bound).
  int64_t eval(const std::map<std::string, int64_t>& env) const;
  /// Text such as "i0 * 4 + r1" (C syntax, fully parenthesised where needed).
  std::string str() const;

 private:
  struct Node;
  explicit Index(std::shared_ptr<const Node> n) : n_(std::move(n)) {}
  static Index make(IndexKind k, const Index& a, const Index& b);
  std::shared_ptr<const Node> n_;
};

/// Inclusive bounds of an index over variables of known ranges.
struct Interval {
  int64_t lo = 0, hi = 0;
};
/// The smallest interval holding `e` when each variable v ranges over
/// ranges[v]; nullopt when a variable has no range or the bound is unknown
/// (division or remainder of a possibly negative value).
std::optional<Interval> bounds(const Index& e, const std::map<std::string, Interval>& ranges);

/// An upper bound of `e` sharper than bounds(e)->hi where min() relates
/// terms: `e` is first rewritten as a min of sums (a + min(b, c) becomes
/// min(a + b, a + c), k * min(b, c) becomes min(k * b, k * c) for k >= 0),
/// each sum's like terms are collected (so x + min(n, N - x) is bounded by
/// N whatever the range of x), and the smallest of the sums' interval
/// bounds is taken; a / c (c a positive literal) is bounded by the bound of
/// a over c. nullopt when no sum can be bounded.
std::optional<int64_t> upper_bound(const Index& e, const std::map<std::string, Interval>& ranges);

/// Whether `e` never decreases as the variable `v` grows: v occurs only
/// under +, * by a non-negative literal, min, and / by a positive literal.
bool non_decreasing_in(const Index& e, const std::string& v);

/// `e` with what the ranges make certain folded away: a % c and a / c with a
/// in [0, c) become a and 0 (so that a reshape's unflatten-then-flatten of
/// an index that cannot carry reads as the index itself).
Index simplify(const Index& e, const std::map<std::string, Interval>& ranges);

/// The row-major flat offset of element `idx` of an array of `shape`:
/// sum idx[d] * stride[d].
Index flat_index(const std::vector<int64_t>& shape, const std::vector<Index>& idx);

/// `e` as constant + sum coef * var when it is affine in its variables; a
/// pair k B (E / B) + k (E % B) of an affine E counts as k E (a loop over
/// two axes collapsed into one: tile/passes/collapse_loops.h).
struct Affine {
  int64_t constant = 0;
  std::map<std::string, int64_t> coef;
};
std::optional<Affine> as_affine(const Index& e);

}  // namespace axon::tile
