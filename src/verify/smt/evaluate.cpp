#include "verify/smt/evaluate.h"

#include <cmath>
#include <functional>
#include <string>

#include "support/diagnostic.h"
#include "ir/real.h"

namespace axon::verify::smt {

namespace {

class Evaluator {
 public:
  explicit Evaluator(EvalEnv env) : env_(std::move(env)) {}

  double poly(const PolyRef& p) {
    double s = 0;
    for (const Monomial& m : p->terms) {
      double c = std::stod(Z3_get_numeral_decimal_string(m.coef.ctx(), m.coef, 30));
      s += c * over(m.binders, 0, [&] {
        double prod = 1;
        for (const AtomRef& a : m.factors) prod *= atom(a);
        return prod;
      });
    }
    return s;
  }

 private:
  int64_t index(const SymIndex& i) {
    int64_t v = i.constant();
    for (const auto& [name, c] : i.terms()) {
      auto it = env_.vars.find(name);
      AXON_CHECK(it != env_.vars.end()) << "no value for " << name;
      v += c * it->second;
    }
    return v;
  }

  // Sums f over the binders from k on.
  double over(const std::vector<Binder>& bs, size_t k, const std::function<double()>& f) {
    if (k == bs.size()) return f();
    double s = 0;
    int64_t n = index(bs[k].extent);
    for (int64_t v = 0; v < n; ++v) {
      env_.vars[bs[k].var] = v;
      s += over(bs, k + 1, f);
    }
    env_.vars.erase(bs[k].var);
    return s;
  }

  double extremum(const AtomRef& a) {
    bool is_max = a->kind == AtomKind::Max;
    double acc = is_max ? -INFINITY : INFINITY;
    std::function<void(size_t)> walk = [&](size_t k) {
      if (k == a->binders.size()) {
        double x = poly(a->args[0]);
        acc = is_max ? (std::isnan(x) || x > acc ? x : acc) : (std::isnan(x) || x < acc ? x : acc);
        return;
      }
      int64_t n = index(a->binders[k].extent);
      for (int64_t v = 0; v < n; ++v) {
        env_.vars[a->binders[k].var] = v;
        walk(k + 1);
      }
      env_.vars.erase(a->binders[k].var);
    };
    walk(0);
    return acc;
  }

  double atom(const AtomRef& a) {
    switch (a->kind) {
      case AtomKind::Param: {
        auto it = env_.inputs.find(a->name);
        AXON_CHECK(it != env_.inputs.end()) << "no input " << a->name;
        const ir::Tensor& t = *it->second;
        std::vector<int64_t> st = ir::row_major_strides(t.type.shape);
        int64_t f = 0;
        for (size_t i = 0; i < a->index.size(); ++i) {
          int64_t v = index(a->index[i]);
          AXON_CHECK(v >= 0 && v < t.type.shape[i]) << a->name << " read out of bounds at axis " << i << ": " << v;
          f += v * st[i];
        }
        return t.data[f];
      }
      case AtomKind::Index: {
        auto it = env_.vars.find(a->name);
        AXON_CHECK(it != env_.vars.end()) << "no value for " << a->name;
        return static_cast<double>(it->second);
      }
      case AtomKind::Fn: return function(a);
      case AtomKind::Recip: return 1 / poly(a->args[0]);
      case AtomKind::Ite: return cond(a->cond) ? poly(a->args[0]) : poly(a->args[1]);
      case AtomKind::Max:
      case AtomKind::Min: return extremum(a);
    }
    return NAN;
  }

  double function(const AtomRef& a) {
    double x = poly(a->args[0]);
    const std::string& n = a->name;
    if (n == "exp") return std::exp(x);
    if (n == "log") return std::log(x);
    if (n == "sqrt") return std::sqrt(x);
    if (n == "tanh") return std::tanh(x);
    if (n == "sin") return std::sin(x);
    if (n == "cos") return std::cos(x);
    if (n == "floor") return std::floor(x);
    if (n == "pow") return std::pow(x, poly(a->args[1]));
    for (ir::DType d : {ir::DType::I32, ir::DType::I64, ir::DType::F16, ir::DType::BF16, ir::DType::F32}) {
      std::string suffix = ir::dtype_name(d);
      if (n == "round_" + suffix || n == "trunc_" + suffix) return ir::cast_to(d, ir::Real{x}).v;
    }
    AXON_CHECK(false) << "no evaluation for " << n;
    return NAN;
  }

  bool cond(const CondRef& c) {
    switch (c->kind) {
      case CondKind::True: return true;
      case CondKind::False: return false;
      case CondKind::RealLt: return poly(c->poly) < 0;
      case CondKind::RealLe: return poly(c->poly) <= 0;
      case CondKind::RealEq: return poly(c->poly) == 0;
      case CondKind::IndexLt: return index(c->index) < 0;
      case CondKind::IndexLe: return index(c->index) <= 0;
      case CondKind::IndexEq: return index(c->index) == 0;
      case CondKind::And: return cond(c->args[0]) && cond(c->args[1]);
      case CondKind::Or: return cond(c->args[0]) || cond(c->args[1]);
      case CondKind::Not: return !cond(c->args[0]);
    }
    return false;
  }

  EvalEnv env_;
};

}  // namespace

double evaluate(const PolyRef& p, const EvalEnv& env) { return Evaluator(env).poly(p); }

}  // namespace axon::verify::smt
