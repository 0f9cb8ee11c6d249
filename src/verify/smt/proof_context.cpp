#include "verify/smt/proof_context.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "support/diagnostic.h"
#include "verify/smt/bounded_check.h"

namespace axon::verify::smt {

namespace {
thread_local ProofContext* g_current = nullptr;

constexpr int64_t kLiteralLimit = 5000;
constexpr int64_t kOffsetLimit = 64;

// Every multiset of at most three placeholders, with its sum.
struct PlaceholderSum {
  int64_t value;
  std::vector<int> members;
};

// Greedy: accept the next candidate when all sums of at most three chosen
// placeholders stay at least 2*kOffsetLimit + 2 apart.
const std::vector<int64_t>& placeholders() {
  static const std::vector<int64_t> table = [] {
    std::vector<int64_t> chosen;
    std::vector<int64_t> sums;
    for (int64_t cand = 10007; chosen.size() < kMaxSymbols; cand += 7) {
      std::vector<int64_t> add;
      // Sums that use cand 1..3 times with up to two other chosen members.
      std::vector<int64_t> base = {0};
      for (int64_t a : chosen) base.push_back(a);
      for (size_t i = 0; i < chosen.size(); ++i)
        for (size_t j = i; j < chosen.size(); ++j) base.push_back(chosen[i] + chosen[j]);
      for (int64_t b : base) {
        add.push_back(b + cand);
        if (b == 0 || std::find(chosen.begin(), chosen.end(), b) != chosen.end()) add.push_back(b + 2 * cand);
        if (b == 0) add.push_back(3 * cand);
      }
      std::vector<int64_t> all = sums;
      all.insert(all.end(), add.begin(), add.end());
      std::sort(all.begin(), all.end());
      bool ok = true;
      for (size_t i = 1; i < all.size() && ok; ++i) ok = all[i] - all[i - 1] >= 2 * kOffsetLimit + 2;
      if (!ok) continue;
      chosen.push_back(cand);
      sums = all;
    }
    return chosen;
  }();
  return table;
}

// All sums over the kMaxSymbols placeholders; a context with n sizes uses
// the ones whose members are all below n.
const std::vector<PlaceholderSum>& placeholder_sums() {
  static const std::vector<PlaceholderSum> table = [] {
    std::vector<PlaceholderSum> out;
    const auto& p = placeholders();
    const int n = kMaxSymbols;
    for (int i = 0; i < n; ++i) {
      out.push_back({p[i], {i}});
      for (int j = i; j < n; ++j) {
        out.push_back({p[i] + p[j], {i, j}});
        for (int k = j; k < n; ++k) out.push_back({p[i] + p[j] + p[k], {i, j, k}});
      }
    }
    return out;
  }();
  return table;
}

// Every product of one to three placeholders (all distinct: checked when
// the table is built), for derived sizes (8 * N) and reshape strides (N * D).
struct PlaceholderProduct {
  int64_t value;
  std::vector<int> members;
};
const std::vector<PlaceholderProduct>& placeholder_products() {
  static const std::vector<PlaceholderProduct> table = [] {
    std::vector<PlaceholderProduct> out;
    const auto& p = placeholders();
    const int n = kMaxSymbols;
    for (int i = 0; i < n; ++i) {
      out.push_back({p[i], {i}});
      for (int j = i; j < n; ++j) {
        out.push_back({p[i] * p[j], {i, j}});
        for (int k = j; k < n; ++k) out.push_back({p[i] * p[j] * p[k], {i, j, k}});
      }
    }
    std::vector<int64_t> values;
    for (const PlaceholderProduct& x : out) values.push_back(x.value);
    std::sort(values.begin(), values.end());
    AXON_CHECK(std::adjacent_find(values.begin(), values.end()) == values.end())
        << "two products of placeholders are equal";
    return out;
  }();
  return table;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}
}  // namespace

std::string AxiomSet::str() const {
  static const char* names[] = {"exp-of-sum", "exp-zero", "exp-positive", "sqrt-square", "log-of-exp", "tanh-odd", "tanh-as-exp"};
  std::string s;
  for (int i = 0; i < static_cast<int>(std::size(names)); ++i)
    if (bits_ & (1u << i)) s += (s.empty() ? "" : ", ") + std::string(names[i]);
  return s.empty() ? "none" : s;
}

int64_t placeholder_size(int i) {
  AXON_CHECK(i >= 0 && i < kMaxSymbols) << "symbol index " << i;
  return placeholders()[i];
}

ProofContext::ProofContext(std::vector<std::string> dims, AxiomSet axioms, unsigned query_timeout_ms, unsigned budget_ms)
    : ctx_(std::make_unique<z3::context>()),
      dims_(std::move(dims)),
      axioms_(axioms),
      query_timeout_ms_(query_timeout_ms),
      budget_ms_(budget_ms),
      start_(std::chrono::steady_clock::now()) {
  AXON_CHECK(dims_.size() <= static_cast<size_t>(kMaxSymbols)) << "at most " << kMaxSymbols << " symbolic sizes";
  for (const std::string& d : dims_) AXON_CHECK(is_identifier(d)) << "size name '" << d << "' is not an identifier";
  outer_ = g_current;
  g_current = this;
}

ProofContext::~ProofContext() { g_current = outer_; }

ProofContext& ProofContext::current() {
  AXON_CHECK(g_current) << "no proof context is active";
  return *g_current;
}
bool ProofContext::active() { return g_current != nullptr; }

bool ProofContext::is_size(const std::string& name) const {
  return std::find(dims_.begin(), dims_.end(), name) != dims_.end();
}

std::map<std::string, int64_t> ProofContext::placeholder_sizes() const {
  std::map<std::string, int64_t> m;
  for (size_t i = 0; i < dims_.size(); ++i) m[dims_[i]] = placeholder_size(static_cast<int>(i));
  return m;
}

bool ProofContext::decode(int64_t value, SymIndex* out) const {
  if (value > -kLiteralLimit && value < kLiteralLimit) {
    *out = SymIndex::literal(value);
    return true;
  }
  int64_t mag = value < 0 ? -value : value;
  const int n = static_cast<int>(dims_.size());
  for (const PlaceholderSum& s : placeholder_sums()) {
    if (std::any_of(s.members.begin(), s.members.end(), [&](int m) { return m >= n; })) continue;
    int64_t off = mag - s.value;
    if (off <= -kOffsetLimit || off >= kOffsetLimit) continue;
    SymIndex r = SymIndex::literal(off);
    for (int m : s.members) r = r + SymIndex::var(dims_[m]);
    *out = value < 0 ? SymIndex() - r : r;
    return true;
  }
  // A literal multiple of a product of sizes, when exactly one reads it.
  const PlaceholderProduct* found = nullptr;
  int64_t times = 0;
  for (const PlaceholderProduct& p : placeholder_products()) {
    if (std::any_of(p.members.begin(), p.members.end(), [&](int m) { return m >= n; })) continue;
    if (mag % p.value != 0 || mag / p.value >= kLiteralLimit) continue;
    if (found) return false;
    found = &p;
    times = mag / p.value;
  }
  if (!found) return false;
  SymIndex r = SymIndex::literal(times);
  for (int m : found->members) r = r * SymIndex::var(dims_[m]);
  *out = value < 0 ? SymIndex() - r : r;
  return true;
}

std::string ProofContext::fresh_var(const std::string& prefix, const SymIndex& extent) {
  std::string name = prefix + "." + std::to_string(next_var_++);
  var_extent_.emplace(name, extent);
  return name;
}

const SymIndex* ProofContext::extent_of(const std::string& var) const {
  auto it = var_extent_.find(var);
  return it == var_extent_.end() ? nullptr : &it->second;
}

int ProofContext::intern(const std::string& key) {
  auto [it, inserted] = interned_.emplace(key, static_cast<int>(interned_.size()));
  return it->second;
}

z3::expr ProofContext::size_expr(const std::string& name) { return ctx_->int_const(name.c_str()); }

z3::expr ProofContext::to_z3(const SymIndex& i, const std::map<std::string, z3::expr>* env) {
  z3::expr e = ctx_->int_val(static_cast<int64_t>(i.constant()));
  for (const auto& [name, c] : i.terms()) {
    z3::expr v = ctx_->int_const(name.c_str());
    if (env) {
      auto it = env->find(name);
      if (it != env->end()) v = it->second;
    }
    e = e + ctx_->int_val(static_cast<int64_t>(c)) * v;
  }
  return e.simplify();
}

std::vector<z3::expr> ProofContext::range_facts(const std::vector<std::string>& vars) {
  std::vector<z3::expr> facts;
  for (const std::string& d : dims_) facts.push_back(size_expr(d) >= 1);
  for (const std::string& v : vars) {
    const SymIndex* e = extent_of(v);
    if (!e) continue;
    z3::expr x = ctx_->int_const(v.c_str());
    facts.push_back(x >= 0);
    facts.push_back(x < to_z3(*e));
  }
  return facts;
}

bool ProofContext::budget_spent() const {
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  return ms > budget_ms_;
}

Verdict ProofContext::check(const z3::expr& claim, const std::vector<z3::expr>& facts, z3::model* model) {
  if (budget_spent()) return Verdict::Unknown;
  std::vector<z3::expr> query = facts;
  query.push_back(!claim);
  auto t0 = std::chrono::steady_clock::now();
  std::string why;
  z3::check_result r = bounded_check(*ctx_, query, std::chrono::milliseconds(query_timeout_ms_), model, &why);
  solver_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ++queries_;
  if (r == z3::unsat) return Verdict::Valid;
  if (r == z3::sat) return Verdict::Invalid;
  last_unknown_ = why;
  return Verdict::Unknown;
}

}  // namespace axon::verify::smt
