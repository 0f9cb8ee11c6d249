#include "verify/smt/prove.h"

#include <optional>

#include "support/diagnostic.h"
#include "verify/smt/encode.h"
#include "verify/smt/to_z3.h"

namespace axon::verify::smt {

const char* proof_status_name(ProofStatus s) {
  switch (s) {
    case ProofStatus::Proved: return "proved";
    case ProofStatus::Refuted: return "refuted";
    case ProofStatus::Unknown: return "unknown";
  }
  return "?";
}

namespace {

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Small assignments, different sizes for different names first (so that a
// rewrite that confuses two axes shows it), then all equal, then random.
std::vector<DimSizes> default_trials(const std::vector<std::string>& dims, int count, uint64_t seed) {
  std::vector<DimSizes> out(4);
  for (size_t i = 0; i < dims.size(); ++i) {
    out[0][dims[i]] = 2 + static_cast<int64_t>(i % 3);
    out[1][dims[i]] = 3 + static_cast<int64_t>((2 * i) % 3);
    out[2][dims[i]] = 2;
    out[3][dims[i]] = 1 + static_cast<int64_t>(mix(seed * 31 + i) % 5);
  }
  if (count < static_cast<int>(out.size())) out.resize(std::max(count, 1));
  return out;
}

void check_same_params(const RewriteCase& c, const RewritePair& p) {
  bool same = p.lhs.params.size() == p.rhs.params.size();
  for (size_t i = 0; same && i < p.lhs.params.size(); ++i)
    same = p.lhs.params[i].name == p.rhs.params[i].name && p.lhs.params[i].type == p.rhs.params[i].type;
  AXON_CHECK(same) << c.name << ": the two sides must have the same parameters";
  AXON_CHECK(p.lhs.outputs.size() == p.rhs.outputs.size()) << c.name << ": the two sides must have as many outputs";
}

std::vector<std::string> index_vars(const ProofContext& s, const std::vector<SymIndex>& idx) {
  std::vector<std::string> v;
  for (const SymIndex& i : idx)
    for (const auto& kv : i.terms())
      if (!s.is_size(kv.first)) v.push_back(kv.first);
  return v;
}

std::string index_text(const std::vector<SymIndex>& idx) {
  std::string t = "[";
  for (size_t a = 0; a < idx.size(); ++a) t += (a ? ", " : "") + idx[a].str();
  return t + "]";
}

// Where the selects of either side switch along each composite output axis,
// from both sides encoded once over the whole output range; nullopt when
// that is outside the encoding.
std::optional<std::vector<std::vector<SymIndex>>> output_boundaries(ProofContext& s, GraphEncoder& el,
                                                                    GraphEncoder& er, const RewritePair& p, size_t o,
                                                                    const std::vector<SymIndex>& shape) {
  bool composite = false;
  for (const SymIndex& d : shape) composite = composite || is_composite(d);
  std::vector<std::vector<SymIndex>> out(shape.size());
  if (!composite) return out;
  std::vector<SymIndex> idx;
  std::vector<std::string> vars;
  for (const SymIndex& d : shape) {
    vars.push_back(s.fresh_var("w", d));
    idx.push_back(SymIndex::var(vars.back()));
  }
  PolyRef L, R;
  try {
    L = el.value(p.lhs.outputs[o], idx).poly();
    R = er.value(p.rhs.outputs[o], idx).poly();
  } catch (const Diagnostic& d) {
    // Not encodable over the whole axis: a reshape merging [N, c] into c N
    // divides the index back only when it is read as c a + b.
    if (!d.unsupported()) throw;
    return std::nullopt;
  }
  for (size_t a = 0; a < shape.size(); ++a) {
    out[a] = select_boundaries(L, vars[a]);
    std::vector<SymIndex> more = select_boundaries(R, vars[a]);
    out[a].insert(out[a].end(), more.begin(), more.end());
  }
  return out;
}

}  // namespace

ProofResult prove_equal(const RewriteCase& c, const ProofOptions& opt) {
  ProofResult res;
  bool proved = true;
  DimSizes model_sizes;
  std::string abstract_model;
  {
    ProofContext s(c.dims, opt.axioms, opt.timeout_ms, opt.budget_ms);
    try {
      RewritePair p = c.build(s.placeholder_sizes());
      check_same_params(c, p);
      Z3Translator z(s);
      GraphEncoder el(p.lhs), er(p.rhs);
      for (size_t o = 0; o < p.lhs.outputs.size() && proved; ++o) {
        const ir::Type& tl = p.lhs[p.lhs.outputs[o]].type;
        const ir::Type& tr = p.rhs[p.rhs.outputs[o]].type;
        std::vector<SymIndex> shape = symbolic_shape(tl.shape);
        if (tl.shape != tr.shape) {
          proved = false;
          res.reason = "output " + std::to_string(o) + " has shape " + index_text(shape) + " on the left and " +
                       index_text(symbolic_shape(tr.shape)) + " on the right";
          break;
        }
        std::optional<std::vector<std::vector<SymIndex>>> bounds = output_boundaries(s, el, er, p, o, shape);
        for (const std::vector<SymIndex>& idx :
             bounds ? output_index_cases(shape, *bounds) : output_index_cases(shape, {}, true)) {
          PolyRef L = el.value(p.lhs.outputs[o], idx).poly();
          PolyRef R = er.value(p.rhs.outputs[o], idx).poly();
          res.trace += "out" + std::to_string(o) + index_text(idx) + ":\n  lhs = " + to_string(L) +
                       "\n  rhs = " + to_string(R) + "\n";
          z3::model m(s.ctx());
          Verdict v = z.prove_equal(L, R, &m);
          if (v == Verdict::Valid) continue;
          proved = false;
          if (v == Verdict::Invalid) {
            abstract_model = z.describe_model(m, index_vars(s, idx));
            model_sizes = z.model_sizes(m);
            res.reason = "the normal forms differ at output " + std::to_string(o) + index_text(idx) +
                         " under some reading of the uninterpreted sums and functions";
          } else {
            const std::string why = s.last_unknown().empty() ? "timeout or incompleteness" : s.last_unknown();
            res.reason = s.budget_spent() ? "the proof budget was spent" : "the solver gave up (" + why + ")";
          }
          break;
        }
      }
    } catch (const Diagnostic& d) {
      proved = false;
      res.reason = "outside the encoding: " + d.message();
    } catch (const InternalError& e) {
      proved = false;
      res.reason = std::string("could not be encoded: ") + e.what();
    } catch (const z3::exception& e) {
      proved = false;
      res.reason = std::string("the solver failed: ") + e.msg();
    }
    res.solver_ms = s.solver_ms();
    res.queries = s.queries();
  }

  std::vector<DimSizes> trials;
  bool model_usable = model_sizes.size() == c.dims.size();
  for (const auto& kv : model_sizes) model_usable = model_usable && kv.second >= 1 && kv.second <= 6;
  if (model_usable) trials.push_back(model_sizes);
  for (const DimSizes& t : default_trials(c.dims, opt.numeric_trials, opt.seed)) trials.push_back(t);
  std::string cex = find_numeric_counterexample(c, trials, opt.seed);

  if (proved) {
    if (cex.empty()) {
      res.status = ProofStatus::Proved;
    } else {
      res.status = ProofStatus::Unknown;
      res.reason = "the solver proved it but the interpreter disagrees (an encoding bug): " + cex;
    }
  } else if (!cex.empty()) {
    res.status = ProofStatus::Refuted;
    res.counterexample = cex;
    if (!abstract_model.empty()) res.counterexample += "\n  solver model: " + abstract_model;
  } else {
    res.status = ProofStatus::Unknown;
  }
  return res;
}

}  // namespace axon::verify::smt
