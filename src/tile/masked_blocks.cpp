#include "tile/masked_blocks.h"

#include <cmath>
#include <limits>

namespace axon::tile {

namespace {

using ir::Op;
using Ranges = std::map<std::string, Interval>;

struct Linear {  // a_i i + a_j j + c
  int64_t a_i = 0, a_j = 0, c = 0;
};

bool passes_through(const Value& v) {
  if (v.kind() != ValueKind::Apply || v.args().size() != 1) return false;
  const Op op = v.op().op;
  if (op == Op::Reshape || op == Op::Broadcast) return true;
  return op == Op::Cast && v.op().type.dtype != ir::DType::Bool;
}

Value strip(Value v) {
  while (passes_through(v)) v = v.args()[0];
  return v;
}

std::optional<int64_t> integer_constant(const Value& v) {
  if (v.kind() != ValueKind::Apply || v.op().op != Op::Constant) return std::nullopt;
  const double x = v.op().attrs.value;
  if (!std::isfinite(x) || x != std::floor(x) || std::fabs(x) > 1e15) return std::nullopt;
  return static_cast<int64_t>(x);
}

std::optional<Linear> linear(const Value& raw, const std::string& i, const std::string& j, const Ranges& ranges) {
  const Value v = strip(raw);
  if (v.kind() == ValueKind::IndexOf) {
    std::optional<Affine> a = as_affine(simplify(v.index(), ranges));
    if (!a) return std::nullopt;
    Linear l;
    l.c = a->constant;
    for (const auto& [name, k] : a->coef) {
      if (name == i) l.a_i = k;
      else if (name == j) l.a_j = k;
      else return std::nullopt;
    }
    return l;
  }
  if (v.kind() != ValueKind::Apply) return std::nullopt;
  if (auto k = integer_constant(v)) return Linear{0, 0, *k};
  const Op op = v.op().op;
  if (op == Op::Neg) {
    auto a = linear(v.args()[0], i, j, ranges);
    if (!a) return std::nullopt;
    return Linear{-a->a_i, -a->a_j, -a->c};
  }
  if (op != Op::Add && op != Op::Sub && op != Op::Mul) return std::nullopt;
  auto a = linear(v.args()[0], i, j, ranges), b = linear(v.args()[1], i, j, ranges);
  if (!a || !b) return std::nullopt;
  if (op == Op::Add) return Linear{a->a_i + b->a_i, a->a_j + b->a_j, a->c + b->c};
  if (op == Op::Sub) return Linear{a->a_i - b->a_i, a->a_j - b->a_j, a->c - b->c};
  // A product is linear when one side is a literal.
  if (a->a_i == 0 && a->a_j == 0) return Linear{a->c * b->a_i, a->c * b->a_j, a->c * b->c};
  if (b->a_i == 0 && b->a_j == 0) return Linear{b->c * a->a_i, b->c * a->a_j, b->c * a->c};
  return std::nullopt;
}

// cond as "a_i i + a_j j + c >= 0" over the integers.
std::optional<AffineMask> condition(const Value& raw, const std::string& i, const std::string& j, const Ranges& ranges) {
  const Value v = strip(raw);
  if (v.kind() != ValueKind::Apply) return std::nullopt;
  const Op op = v.op().op;
  auto negate = [](std::optional<AffineMask> m) -> std::optional<AffineMask> {
    if (!m) return std::nullopt;  // not (e >= 0) is -e - 1 >= 0
    return AffineMask{-m->a_i, -m->a_j, -m->c - 1};
  };
  if (op == Op::Not) return negate(condition(v.args()[0], i, j, ranges));
  if (op == Op::Select) {  // where(c, 1, 0) is c, where(c, 0, 1) is not c
    auto t = integer_constant(strip(v.args()[1])), f = integer_constant(strip(v.args()[2]));
    if (t && f && *t != 0 && *f == 0) return condition(v.args()[0], i, j, ranges);
    if (t && f && *t == 0 && *f != 0) return negate(condition(v.args()[0], i, j, ranges));
    return std::nullopt;
  }
  if (op != Op::Ge && op != Op::Gt && op != Op::Le && op != Op::Lt) return std::nullopt;
  auto a = linear(v.args()[0], i, j, ranges), b = linear(v.args()[1], i, j, ranges);
  if (!a || !b) return std::nullopt;
  const AffineMask d{a->a_i - b->a_i, a->a_j - b->a_j, a->c - b->c};  // a - b
  if (op == Op::Ge) return d;                                // a - b >= 0
  if (op == Op::Gt) return AffineMask{d.a_i, d.a_j, d.c - 1};  // a - b - 1 >= 0
  if (op == Op::Le) return AffineMask{-d.a_i, -d.a_j, -d.c};   // b - a >= 0
  return AffineMask{-d.a_i, -d.a_j, -d.c - 1};                 // b - a - 1 >= 0
}

bool minus_infinity(const Value& raw) {
  const Value v = strip(raw);
  return v.kind() == ValueKind::Apply && v.op().op == Op::Constant &&
         v.op().attrs.value == -std::numeric_limits<double>::infinity();
}

// ceil((x k + t) / d) for x >= 0, k >= 0 and d > 0, as an Index; nullopt
// where t + d - 1 < 0, so that the division stays one of non-negative values.
std::optional<Index> ceil_div(const Index& x, int64_t k, int64_t t, int64_t d) {
  if (t + d - 1 < 0) return std::nullopt;
  return (x * Index(k) + Index(t + d - 1)) / Index(d);
}

}  // namespace

std::optional<AffineMask> affine_mask(const Value& score, const std::string& i, const std::string& j, const Ranges& ranges) {
  const Value v = strip(score);
  if (v.kind() != ValueKind::Apply || v.op().op != Op::Select) return std::nullopt;
  if (minus_infinity(v.args()[1])) return condition(v.args()[0], i, j, ranges);
  if (minus_infinity(v.args()[2])) {
    std::optional<AffineMask> m = condition(v.args()[0], i, j, ranges);
    if (!m) return std::nullopt;
    return AffineMask{-m->a_i, -m->a_j, -m->c - 1};
  }
  return std::nullopt;
}

std::optional<Index> key_blocks_unmasked(const AffineMask& m, const Index& qb, int64_t bq, int64_t bk, int64_t blocks) {
  if (m.a_j <= 0 || m.a_i > 0 || bq <= 0 || bk <= 0) return std::nullopt;
  // Block kb hides nothing when its largest a_i i + a_j j + c, at the
  // block's first row and last key, is < 0: a_j kb bk < u with
  // u = -a_i qb bq - a_j (bk - 1) - c. The blocks before ceil(u / (a_j bk)).
  std::optional<Index> unmasked = ceil_div(qb, -m.a_i * bq, -m.a_j * (bk - 1) - m.c, m.a_j * bk);
  if (!unmasked) return std::nullopt;
  return min(*unmasked, Index(blocks));
}

std::optional<Index> keys_unmasked(const AffineMask& m, const Index& row, const Index& key0, int64_t bk) {
  if (m.a_j <= 0 || m.a_i > 0 || bk <= 0) return std::nullopt;
  // Key j of the block is masked when a_i row + a_j (key0 + j) + c >= 0,
  // j >= ceil((-a_i row - c) / a_j) - key0.
  std::optional<Index> first_masked = ceil_div(row, -m.a_i, -m.c, m.a_j);
  if (!first_masked) return std::nullopt;
  const Index n = *first_masked - key0;
  const Index at_least_0 = min(Index(0), n * Index(-1)) * Index(-1);  // max(0, n)
  return min(at_least_0, Index(bk));
}

std::optional<Value> unmasked_score(const Value& score) {
  if (passes_through(score)) {
    std::optional<Value> inner = unmasked_score(score.args()[0]);
    if (!inner) return std::nullopt;
    return Value::apply(score.op(), {*inner});
  }
  if (score.kind() != ValueKind::Apply || score.op().op != Op::Select) return std::nullopt;
  if (minus_infinity(score.args()[1])) return score.args()[2];
  if (minus_infinity(score.args()[2])) return score.args()[1];
  return std::nullopt;
}

std::optional<Index> key_blocks_needed(const AffineMask& m, const Index& qb, int64_t bq, int64_t bk, int64_t blocks) {
  if (m.a_j <= 0 || m.a_i > 0 || bq <= 0 || bk <= 0) return std::nullopt;
  // Block kb is wholly masked when its smallest a_i i + a_j j + c, at the
  // block's last row and first key, is >= 0: a_j kb bk >= t with
  // t = -a_i (qb bq + bq - 1) - c. The blocks before ceil(t / (a_j bk))
  // are computed.
  std::optional<Index> needed = ceil_div(qb, -m.a_i * bq, -m.a_i * (bq - 1) - m.c, m.a_j * bk);
  if (!needed) return std::nullopt;
  return min(*needed, Index(blocks));
}

}  // namespace axon::tile
