#include "verify/smt/sym_index.h"

#include <algorithm>
#include <sstream>

#include "support/diagnostic.h"
#include "verify/smt/proof_context.h"

namespace axon::verify::smt {

namespace {
int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

void add_term(std::map<std::vector<std::string>, int64_t>& p, const std::vector<std::string>& m, int64_t c) {
  if (c == 0) return;
  int64_t& k = p[m];
  k += c;
  if (k == 0) p.erase(m);
}

std::vector<std::string> times(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> m = a;
  m.insert(m.end(), b.begin(), b.end());
  std::sort(m.begin(), m.end());
  return m;
}

// b's names as a sub-multiset of a's: the rest, or false.
bool divide_names(const std::vector<std::string>& a, const std::vector<std::string>& b, std::vector<std::string>* rest) {
  std::vector<std::string> r = a;
  for (const std::string& n : b) {
    auto it = std::find(r.begin(), r.end(), n);
    if (it == r.end()) return false;
    r.erase(it);
  }
  *rest = r;
  return true;
}
}  // namespace

SymIndex::SymIndex(int64_t value) {
  if (ProofContext::active()) {
    SymIndex d;
    if (!ProofContext::current().decode(value, &d))
      AXON_UNSUPPORTED() << "the size " << value
                         << " is neither a small literal, a sum of symbolic sizes nor one multiple of a product of them";
    *this = d;
    return;
  }
  constant_ = value;
}

SymIndex SymIndex::literal(int64_t value) {
  SymIndex s;
  s.constant_ = value;
  return s;
}

SymIndex SymIndex::var(const std::string& name) {
  SymIndex s;
  s.terms_[name] = 1;
  return s;
}

const std::map<std::string, int64_t>& SymIndex::terms() const {
  if (!products_.empty())
    AXON_UNSUPPORTED() << "the index " << str() << " is not affine (a reshape that merges or splits symbolic axes)";
  return terms_;
}

std::string SymIndex::single_var() const {
  if (constant_ != 0 || terms_.size() != 1 || !products_.empty() || terms_.begin()->second != 1) return "";
  return terms_.begin()->first;
}

SymIndex::Polynomial SymIndex::polynomial() const {
  Polynomial p = products_;
  for (const auto& [name, c] : terms_) p[{name}] = c;
  if (constant_ != 0) p[{}] = constant_;
  return p;
}

SymIndex SymIndex::of(const Polynomial& p) {
  SymIndex s;
  for (const auto& [m, c] : p) {
    if (c == 0) continue;
    if (m.empty()) s.constant_ = c;
    else if (m.size() == 1) s.terms_[m[0]] = c;
    else s.products_[m] = c;
  }
  return s;
}

std::string SymIndex::str() const {
  std::ostringstream os;
  bool first = true;
  auto term = [&](const std::string& name, int64_t c) {
    if (!first) os << (c < 0 ? " - " : " + ");
    else if (c < 0) os << "-";
    int64_t m = c < 0 ? -c : c;
    if (m != 1) os << m << "*";
    os << name;
    first = false;
  };
  for (const auto& [name, c] : terms_) term(name, c);
  for (const auto& [names, c] : products_) {
    std::string n;
    for (const std::string& x : names) n += (n.empty() ? "" : "*") + x;
    term(n, c);
  }
  if (first) {
    os << constant_;
  } else if (constant_ != 0) {
    os << (constant_ < 0 ? " - " : " + ") << (constant_ < 0 ? -constant_ : constant_);
  }
  return os.str();
}

SymIndex SymIndex::substitute(const std::map<std::string, SymIndex>& by) const {
  SymIndex out = literal(constant_);
  for (const auto& [name, c] : terms_) {
    auto it = by.find(name);
    out = out + (it != by.end() ? it->second.scaled(c) : var(name).scaled(c));
  }
  for (const auto& [names, c] : products_) {
    SymIndex prod = literal(c);
    for (const std::string& n : names) {
      auto it = by.find(n);
      prod = prod * (it != by.end() ? it->second : var(n));
    }
    out = out + prod;
  }
  return out;
}

SymIndex SymIndex::scaled(int64_t c) const {
  Polynomial p;
  for (const auto& [m, k] : polynomial()) add_term(p, m, k * c);
  return of(p);
}

SymIndex operator+(const SymIndex& a, const SymIndex& b) {
  SymIndex::Polynomial p = a.polynomial();
  for (const auto& [m, c] : b.polynomial()) add_term(p, m, c);
  return SymIndex::of(p);
}

SymIndex operator-(const SymIndex& a, const SymIndex& b) { return a + b.scaled(-1); }

SymIndex operator*(const SymIndex& a, const SymIndex& b) {
  SymIndex::Polynomial p;
  for (const auto& [ma, ca] : a.polynomial())
    for (const auto& [mb, cb] : b.polynomial()) add_term(p, times(ma, mb), ca * cb);
  return SymIndex::of(p);
}

bool SymIndex::divide(const SymIndex& a, const SymIndex& b, SymIndex* q, SymIndex* r) {
  if (!ProofContext::active()) return false;
  const ProofContext& s = ProofContext::current();
  Polynomial bp = b.polynomial();
  if (bp.empty()) return false;
  // The divisor must be positive: a sum of products of sizes with positive
  // coefficients (a single product, or a sum such as N1 + N2).
  for (const auto& [m, c] : bp) {
    if (c <= 0) return false;
    for (const std::string& n : m)
      if (!s.is_size(n)) return false;
  }
  // Whether r = a - b*q is provably in [0, b): each term of r non-negative
  // and bounded (coef * (extent(v) - 1) * sizes for a term with one index
  // variable v; its exact value for a literal or a product of sizes), and
  // b - 1 minus the bound a polynomial with no negative coefficient.
  auto remainder_fits = [&](const Polynomial& rp) {
    Polynomial bound;
    for (const auto& [m, c] : rp) {
      if (c < 0) return false;
      Monomial sizes;
      std::string v;
      int vars = 0;
      for (const std::string& n : m) {
        if (s.is_size(n)) sizes.push_back(n);
        else {
          v = n;
          ++vars;
        }
      }
      if (vars > 1) return false;
      if (vars == 0) {
        add_term(bound, m, c);
        continue;
      }
      const SymIndex* e = s.extent_of(v);
      if (!e) return false;
      SymIndex t = (*e - literal(1)) * of({{sizes, c}});
      for (const auto& [mm, cc] : t.polynomial()) add_term(bound, mm, cc);
    }
    Polynomial slack = bp;
    add_term(slack, {}, -1);
    for (const auto& [m, c] : bound) add_term(slack, m, -c);
    for (const auto& kv : slack)
      if (kv.second < 0) return false;
    return true;
  };
  // Candidate quotients, read off the first term of the divisor: every term
  // of a it divides; only those whose quotient holds an index variable (so
  // that a size term such as N1 in N1 + o stays in the remainder); none.
  const Monomial& bm = bp.begin()->first;
  const int64_t bc = bp.begin()->second;
  Polynomial cands[3];
  for (const auto& [m, c] : a.polynomial()) {
    Monomial rest;
    if (!divide_names(m, bm, &rest) || c % bc != 0) continue;
    add_term(cands[0], rest, c / bc);
    bool has_var = false;
    for (const std::string& n : rest) has_var = has_var || !s.is_size(n);
    if (has_var) add_term(cands[1], rest, c / bc);
  }
  Polynomial qp, rp;
  bool found = false;
  for (const Polynomial& cand : cands) {
    Polynomial rem = (a - b * of(cand)).polynomial();
    if (remainder_fits(rem)) {
      qp = cand;
      rp = rem;
      found = true;
      break;
    }
  }
  if (!found) return false;
  *q = of(qp);
  *r = of(rp);
  return true;
}

SymIndex operator/(const SymIndex& a, const SymIndex& b) {
  if (a.is_literal() && b.is_literal()) {
    AXON_CHECK(b.constant() != 0) << "index division by zero";
    return SymIndex::literal(floor_div(a.constant(), b.constant()));
  }
  SymIndex q, r;
  if (SymIndex::divide(a, b, &q, &r)) return q;
  AXON_UNSUPPORTED() << "the index quotient (" << a.str() << ") / (" << b.str()
                     << ") does not fold (a reshape that splits or merges symbolic axes)";
}

SymIndex operator%(const SymIndex& a, const SymIndex& b) {
  if (a.is_literal() && b.is_literal()) {
    AXON_CHECK(b.constant() != 0) << "index modulo by zero";
    return SymIndex::literal(a.constant() - floor_div(a.constant(), b.constant()) * b.constant());
  }
  SymIndex q, r;
  if (SymIndex::divide(a, b, &q, &r)) return r;
  AXON_UNSUPPORTED() << "the index remainder (" << a.str() << ") % (" << b.str()
                     << ") does not fold (a reshape that splits or merges symbolic axes)";
}

}  // namespace axon::verify::smt
