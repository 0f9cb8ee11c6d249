#include "tile/index.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <stdexcept>

namespace axon::tile {

struct Index::Node {
  IndexKind kind = IndexKind::Const;
  int64_t value = 0;
  std::string name;
  std::shared_ptr<const Node> a, b;  // Add, Mul, Div, Mod, Min
};

namespace {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

}  // namespace

Index::Index() {
  static const std::shared_ptr<const Node> zero = std::make_shared<const Node>();
  n_ = zero;
}

Index::Index(int64_t value) {
  auto n = std::make_shared<Node>();
  n->value = value;
  n_ = std::move(n);
}

Index Index::var(const std::string& name) {
  auto n = std::make_shared<Node>();
  n->kind = IndexKind::Var;
  n->name = name;
  return Index(std::shared_ptr<const Node>(std::move(n)));
}

IndexKind Index::kind() const { return n_->kind; }
int64_t Index::value() const { return n_->value; }
const std::string& Index::name() const { return n_->name; }
Index Index::a() const { return Index(n_->a); }
Index Index::b() const { return Index(n_->b); }

Index Index::make(IndexKind k, const Index& a, const Index& b) {
  auto n = std::make_shared<Node>();
  n->kind = k;
  n->a = a.n_;
  n->b = b.n_;
  return Index(std::shared_ptr<const Node>(std::move(n)));
}

Index operator+(const Index& a, const Index& b) {
  if (a.is_const() && b.is_const()) return Index(a.value() + b.value());
  if (a.is_const() && a.value() == 0) return b;
  if (b.is_const() && b.value() == 0) return a;
  // Literals gather at the right: (x + c1) + c2 = x + (c1 + c2); c + x = x + c.
  if (a.is_const()) return b + a;
  if (b.is_const() && a.kind() == IndexKind::Add && a.b().is_const()) return a.a() + Index(a.b().value() + b.value());
  if (a.kind() == IndexKind::Add && a.b().is_const()) return (a.a() + b) + a.b();
  return Index::make(IndexKind::Add, a, b);
}

Index operator-(const Index& a, const Index& b) { return a + b * Index(int64_t{-1}); }

Index operator*(const Index& a, const Index& b) {
  if (a.is_const() && b.is_const()) return Index(a.value() * b.value());
  if (a.is_const()) return b * a;  // literals on the right
  if (b.is_const() && b.value() == 0) return Index(int64_t{0});
  if (b.is_const() && b.value() == 1) return a;
  if (b.is_const() && a.kind() == IndexKind::Mul && a.b().is_const()) return a.a() * Index(a.b().value() * b.value());
  // Distribute a literal over a sum so that affine forms stay flat.
  if (b.is_const() && a.kind() == IndexKind::Add) return a.a() * b + a.b() * b;
  return Index::make(IndexKind::Mul, a, b);
}

Index operator/(const Index& a, const Index& b) {
  if (a.is_const() && b.is_const()) return Index(floor_div(a.value(), b.value()));
  if (b.is_const() && b.value() == 1) return a;
  if (a.is_const() && a.value() == 0) return a;
  return Index::make(IndexKind::Div, a, b);
}

Index operator%(const Index& a, const Index& b) {
  if (a.is_const() && b.is_const()) return Index(floor_mod(a.value(), b.value()));
  if (b.is_const() && b.value() == 1) return Index(int64_t{0});
  if (a.is_const() && a.value() == 0) return a;
  return Index::make(IndexKind::Mod, a, b);
}

Index min(const Index& a, const Index& b) {
  if (a.is_const() && b.is_const()) return Index(std::min(a.value(), b.value()));
  if (a.same_as(b)) return a;
  return Index::make(IndexKind::Min, a, b);
}

bool Index::same_as(const Index& o) const {
  if (n_ == o.n_) return true;
  if (kind() != o.kind()) return false;
  switch (kind()) {
    case IndexKind::Const: return value() == o.value();
    case IndexKind::Var: return name() == o.name();
    default: return a().same_as(o.a()) && b().same_as(o.b());
  }
}

bool Index::uses(const std::string& v) const {
  switch (kind()) {
    case IndexKind::Const: return false;
    case IndexKind::Var: return name() == v;
    default: return a().uses(v) || b().uses(v);
  }
}

Index Index::substitute(const std::function<std::optional<Index>(const std::string&)>& f) const {
  switch (kind()) {
    case IndexKind::Const: return *this;
    case IndexKind::Var: {
      std::optional<Index> r = f(name());
      return r ? *r : *this;
    }
    case IndexKind::Add: return a().substitute(f) + b().substitute(f);
    case IndexKind::Mul: return a().substitute(f) * b().substitute(f);
    case IndexKind::Div: return a().substitute(f) / b().substitute(f);
    case IndexKind::Mod: return a().substitute(f) % b().substitute(f);
    case IndexKind::Min: return min(a().substitute(f), b().substitute(f));
  }
  return *this;
}

int64_t Index::eval(const std::map<std::string, int64_t>& env) const {
  switch (kind()) {
    case IndexKind::Const: return value();
    case IndexKind::Var: {
      auto it = env.find(name());
      if (it == env.end()) throw std::logic_error("tile index: unbound variable " + name());
      return it->second;
    }
    case IndexKind::Add: return a().eval(env) + b().eval(env);
    case IndexKind::Mul: return a().eval(env) * b().eval(env);
    case IndexKind::Div: return floor_div(a().eval(env), b().eval(env));
    case IndexKind::Mod: return floor_mod(a().eval(env), b().eval(env));
    case IndexKind::Min: return std::min(a().eval(env), b().eval(env));
  }
  return 0;
}

std::string Index::str() const {
  auto operand = [](const Index& e) {
    std::string s = e.str();
    bool atom = e.kind() == IndexKind::Var || (e.is_const() && e.value() >= 0) || e.kind() == IndexKind::Min;
    return atom ? s : "(" + s + ")";
  };
  switch (kind()) {
    case IndexKind::Const: return std::to_string(value());
    case IndexKind::Var: return name();
    case IndexKind::Add:
      if (b().is_const() && b().value() < 0) return a().str() + " - " + std::to_string(-b().value());
      return a().str() + " + " + b().str();
    case IndexKind::Mul: return (a().kind() == IndexKind::Mul ? a().str() : operand(a())) + " * " + operand(b());
    case IndexKind::Div: return operand(a()) + " / " + operand(b());
    case IndexKind::Mod: return operand(a()) + " % " + operand(b());
    case IndexKind::Min: return "min(" + a().str() + ", " + b().str() + ")";
  }
  return "?";
}

std::optional<Interval> bounds(const Index& e, const std::map<std::string, Interval>& ranges) {
  switch (e.kind()) {
    case IndexKind::Const: return Interval{e.value(), e.value()};
    case IndexKind::Var: {
      auto it = ranges.find(e.name());
      if (it == ranges.end()) return std::nullopt;
      return it->second;
    }
    default: break;
  }
  std::optional<Interval> a = bounds(e.a(), ranges), b = bounds(e.b(), ranges);
  if (!a || !b) return std::nullopt;
  switch (e.kind()) {
    case IndexKind::Add: return Interval{a->lo + b->lo, a->hi + b->hi};
    case IndexKind::Mul: {
      int64_t c[4] = {a->lo * b->lo, a->lo * b->hi, a->hi * b->lo, a->hi * b->hi};
      return Interval{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
    }
    case IndexKind::Div: {
      // Floor division (Index::eval) and C's truncation (the printers) of
      // a possibly negative numerator: both are monotone in each operand
      // over a positive divisor, so the corners hold the extremes.
      if (b->lo <= 0) return std::nullopt;
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (int64_t x : {a->lo, a->hi})
        for (int64_t y : {b->lo, b->hi})
          for (int64_t q : {floor_div(x, y), x / y}) lo = std::min(lo, q), hi = std::max(hi, q);
      return Interval{lo, hi};
    }
    case IndexKind::Mod:
      if (a->lo < 0 || b->lo <= 0) return std::nullopt;
      if (a->hi < b->lo) return *a;  // no wrap
      return Interval{0, std::min(a->hi, b->hi - 1)};
    case IndexKind::Min: return Interval{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
    default: return std::nullopt;
  }
}

namespace {

// A sum constant + coef * atom + ..., the atoms being variables and the
// subterms (/, %, a product of two variables, a negated min) that are not
// sums themselves, keyed by their text so that like terms meet.
struct Linear {
  int64_t constant = 0;
  std::map<std::string, std::pair<Index, int64_t>> terms;
};

Linear atom(const Index& e) {
  Linear l;
  l.terms[e.str()] = {e, 1};
  return l;
}

Linear scaled(Linear l, int64_t k) {
  l.constant *= k;
  for (auto& [key, t] : l.terms) t.second *= k;
  return l;
}

// `e` as at most the min of the returned sums (equal to it when *exact
// stays true); false when that takes more than `cap` sums.
bool min_of_sums(const Index& e, std::vector<Linear>* out, size_t cap, bool* exact) {
  out->clear();
  switch (e.kind()) {
    case IndexKind::Const: out->push_back(Linear{e.value(), {}}); return true;
    case IndexKind::Add: {
      std::vector<Linear> a, b;
      if (!min_of_sums(e.a(), &a, cap, exact) || !min_of_sums(e.b(), &b, cap, exact) || a.size() * b.size() > cap)
        return false;
      for (const Linear& x : a)
        for (const Linear& y : b) {
          Linear s = x;
          s.constant += y.constant;
          for (const auto& [key, t] : y.terms) {
            auto [it, fresh] = s.terms.emplace(key, t);
            if (!fresh) it->second.second += t.second;
          }
          out->push_back(std::move(s));
        }
      return true;
    }
    case IndexKind::Mul: {
      const Index& k = e.b().is_const() ? e.b() : e.a();
      const Index& x = e.b().is_const() ? e.a() : e.b();
      if (!k.is_const()) break;
      // (y / d) * k <= y * (k / d) for d > 0 dividing k >= 0 (floor division).
      if (k.value() >= 0 && x.kind() == IndexKind::Div && x.b().is_const() && x.b().value() > 0 &&
          k.value() % x.b().value() == 0) {
        std::vector<Linear> ys;
        if (!min_of_sums(x.a(), &ys, cap, exact)) return false;
        *exact = false;
        for (Linear& l : ys) out->push_back(scaled(std::move(l), k.value() / x.b().value()));
        return true;
      }
      std::vector<Linear> xs;
      bool inner_exact = true;
      if (!min_of_sums(x, &xs, cap, &inner_exact)) return false;
      // A negative factor turns a min into a max, and an upper bound into a
      // lower one: then the product is an atom.
      if (k.value() < 0 && (xs.size() > 1 || !inner_exact)) {
        out->push_back(scaled(atom(x), k.value()));
        return true;
      }
      *exact = *exact && inner_exact;
      for (Linear& l : xs) out->push_back(scaled(std::move(l), k.value()));
      return true;
    }
    case IndexKind::Min: {
      std::vector<Linear> a, b;
      if (!min_of_sums(e.a(), &a, cap, exact) || !min_of_sums(e.b(), &b, cap, exact) || a.size() + b.size() > cap)
        return false;
      out->insert(out->end(), a.begin(), a.end());
      out->insert(out->end(), b.begin(), b.end());
      return true;
    }
    default: break;
  }
  out->push_back(atom(e));
  return true;
}

}  // namespace

std::optional<int64_t> upper_bound(const Index& e, const std::map<std::string, Interval>& ranges) {
  std::optional<int64_t> best;
  if (std::optional<Interval> r = bounds(e, ranges)) best = r->hi;
  // Floor division by a positive literal never decreases: a / c is at most
  // (the bound of a) / c.
  if (e.kind() == IndexKind::Div && e.b().is_const() && e.b().value() > 0)
    if (std::optional<int64_t> h = upper_bound(e.a(), ranges)) {
      const int64_t c = e.b().value(), q = *h >= 0 ? *h / c : -((-*h + c - 1) / c);
      if (!best || q < *best) best = q;
    }
  std::vector<Linear> sums;
  bool exact = true;
  if (!min_of_sums(e, &sums, 256, &exact)) return best;
  for (const Linear& s : sums) {
    int64_t hi = s.constant;
    bool ok = true;
    for (const auto& [key, t] : s.terms) {
      if (t.second == 0) continue;
      std::optional<Interval> r = bounds(t.first, ranges);
      if (!r) {
        ok = false;
        break;
      }
      hi += t.second > 0 ? t.second * r->hi : t.second * r->lo;
    }
    if (ok && (!best || hi < *best)) best = hi;
  }
  return best;
}

bool non_decreasing_in(const Index& e, const std::string& v) {
  if (!e.uses(v)) return true;
  switch (e.kind()) {
    case IndexKind::Var: return true;
    case IndexKind::Add:
    case IndexKind::Min: return non_decreasing_in(e.a(), v) && non_decreasing_in(e.b(), v);
    case IndexKind::Mul:
      if (e.b().is_const()) return e.b().value() >= 0 && non_decreasing_in(e.a(), v);
      if (e.a().is_const()) return e.a().value() >= 0 && non_decreasing_in(e.b(), v);
      return false;
    case IndexKind::Div: return e.b().is_const() && e.b().value() > 0 && non_decreasing_in(e.a(), v);
    default: return false;
  }
}

Index simplify(const Index& e, const std::map<std::string, Interval>& ranges) {
  switch (e.kind()) {
    case IndexKind::Const:
    case IndexKind::Var: return e;
    default: break;
  }
  Index a = simplify(e.a(), ranges), b = simplify(e.b(), ranges);
  if ((e.kind() == IndexKind::Div || e.kind() == IndexKind::Mod) && b.is_const() && b.value() > 0) {
    const int64_t c = b.value();
    std::optional<Interval> r = bounds(a, ranges);
    if (r && r->lo >= 0 && r->hi < c) return e.kind() == IndexKind::Mod ? a : Index(int64_t{0});
    // a = c q + rest with rest in [0, c): a / c = q and a % c = rest. (A
    // rest that could reach c is left alone: the printer folds a reshape's
    // unflatten-then-flatten of the whole sum, codegen/c_like.)
    std::optional<Affine> f = as_affine(a);
    if (f && f->constant >= 0) {
      Index q(f->constant / c), rest(f->constant % c);
      for (const auto& [v, k] : f->coef) {
        if (k % c == 0) q = q + Index::var(v) * Index(k / c);
        else rest = rest + Index::var(v) * Index(k);
      }
      std::optional<Interval> rr = bounds(rest, ranges);
      if (rr && rr->lo >= 0 && rr->hi < c) return e.kind() == IndexKind::Mod ? rest : q;
    }
  }
  switch (e.kind()) {
    case IndexKind::Add: return a + b;
    case IndexKind::Mul: return a * b;
    case IndexKind::Div: return a / b;
    case IndexKind::Mod: return a % b;
    case IndexKind::Min: return min(a, b);
    default: return e;
  }
}

Index flat_index(const std::vector<int64_t>& shape, const std::vector<Index>& idx) {
  Index off;
  int64_t stride = 1;
  for (size_t d = idx.size(); d-- > 0;) {
    off = idx[d] * Index(stride) + off;
    stride *= d < shape.size() ? shape[d] : 1;
  }
  return off;
}

namespace {

// An affine form whose terms may also be E / B and E % B of a literal B > 0
// and an E of this form, kept apart by (E's text, B) until as_affine pairs
// them (E itself may hold such terms: loops collapsed twice).
struct Terms {
  struct Part {
    std::shared_ptr<const Terms> of;  // E
    int64_t k = 0;                    // the term's coefficient
  };
  using Key = std::pair<std::string, int64_t>;
  int64_t constant = 0;
  std::map<std::string, int64_t> coef;
  std::map<Key, Part> quotients, remainders;

  bool only_constant() const { return coef.empty() && quotients.empty() && remainders.empty(); }
  // this += m * o
  void add(const Terms& o, int64_t m) {
    constant += m * o.constant;
    for (const auto& [v, c] : o.coef) coef[v] += m * c;
    for (const auto& [x, p] : o.quotients) quotients.emplace(x, Part{p.of, 0}).first->second.k += m * p.k;
    for (const auto& [x, p] : o.remainders) remainders.emplace(x, Part{p.of, 0}).first->second.k += m * p.k;
  }
};

std::optional<Terms> terms_of(const Index& e) {
  switch (e.kind()) {
    case IndexKind::Const: {
      Terms t;
      t.constant = e.value();
      return t;
    }
    case IndexKind::Var: {
      Terms t;
      t.coef[e.name()] = 1;
      return t;
    }
    case IndexKind::Add: {
      auto a = terms_of(e.a()), b = terms_of(e.b());
      if (!a || !b) return std::nullopt;
      a->add(*b, 1);
      return a;
    }
    case IndexKind::Mul: {
      auto a = terms_of(e.a()), b = terms_of(e.b());
      if (!a || !b) return std::nullopt;
      if (!a->only_constant() && !b->only_constant()) return std::nullopt;
      if (a->only_constant()) std::swap(a, b);
      Terms t;
      t.add(*a, b->constant);
      return t;
    }
    case IndexKind::Div:
    case IndexKind::Mod: {
      if (!e.b().is_const() || e.b().value() <= 0) return std::nullopt;
      std::optional<Terms> of = terms_of(e.a());
      if (!of) return std::nullopt;
      Terms t;
      (e.kind() == IndexKind::Div ? t.quotients : t.remainders)[{e.a().str(), e.b().value()}] =
          Terms::Part{std::make_shared<const Terms>(std::move(*of)), 1};
      return t;
    }
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<Affine> as_affine(const Index& e) {
  std::optional<Terms> t = terms_of(e);
  if (!t) return std::nullopt;
  // E = B (E / B) + E % B, with floor division as with C's truncating one:
  // k B (E / B) + k (E % B) is k E, whose own pairs may then meet.
  for (bool paired = true; paired;) {
    paired = false;
    std::vector<Terms::Key> keys;
    for (const auto& [x, r] : t->remainders)
      if (r.k != 0) keys.push_back(x);
    for (const Terms::Key& x : keys) {
      Terms::Part& r = t->remainders.at(x);
      auto q = t->quotients.find(x);
      if (q == t->quotients.end() || q->second.k != r.k * x.second) continue;
      const int64_t k = r.k;
      const std::shared_ptr<const Terms> of = r.of;
      r.k = 0, q->second.k = 0;
      t->add(*of, k);
      paired = true;
    }
  }
  for (const auto& [x, q] : t->quotients)
    if (q.k != 0) return std::nullopt;
  for (const auto& [x, r] : t->remainders)
    if (r.k != 0) return std::nullopt;
  Affine a;
  a.constant = t->constant;
  a.coef = t->coef;
  return a;
}

}  // namespace axon::tile
