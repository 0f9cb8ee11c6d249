#include "verify/smt/encode.h"

#include <algorithm>
#include <set>

#include "ir/element_def.h"
#include "support/diagnostic.h"
#include "verify/smt/proof_context.h"

namespace axon::verify::smt {

using namespace axon::ir;

namespace {
constexpr int64_t kUnrollLimit = 4;
constexpr size_t kMaxPieceCombos = 64;

std::string index_key(const std::vector<SymIndex>& idx) {
  std::string k;
  for (const SymIndex& i : idx) k += i.str() + ",";
  return k;
}

// The cartesian product of per-axis tiles.
std::vector<std::vector<RangePiece>> combos(const std::vector<std::vector<RangePiece>>& per_axis) {
  std::vector<std::vector<RangePiece>> out = {{}};
  for (const auto& pieces : per_axis) {
    std::vector<std::vector<RangePiece>> next;
    for (const auto& prefix : out)
      for (const RangePiece& p : pieces) {
        next.push_back(prefix);
        next.back().push_back(p);
      }
    out = std::move(next);
    if (out.size() > kMaxPieceCombos) AXON_UNSUPPORTED() << "more than " << kMaxPieceCombos << " tiles in one reduction";
  }
  return out;
}
}  // namespace

namespace {

// The units a composite extent is made of: each size term (coefficient c
// gives c units), then the literal part.
std::vector<SymIndex> extent_units(const SymIndex& extent, bool* negative) {
  std::vector<SymIndex> units;
  *negative = extent.constant() < 0;
  for (const auto& [name, c] : extent.terms()) {
    if (c < 0) *negative = true;
    for (int64_t k = 0; k < c; ++k) units.push_back(SymIndex::var(name));
  }
  return units;
}

// An order of the units whose prefix sums contain every boundary; name
// order when none does.
std::vector<SymIndex> order_units(std::vector<SymIndex> units, const SymIndex& extent,
                                  const std::vector<SymIndex>& boundaries) {
  std::set<std::string> wanted;
  for (const SymIndex& b : boundaries)
    if (!(b.is_literal() && b.constant() <= 0) && b != extent) wanted.insert(b.str());
  if (wanted.empty() || units.size() > 5) return units;
  std::vector<std::string> keys;
  for (const SymIndex& u : units) keys.push_back(u.str());
  std::vector<size_t> perm(units.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  std::sort(perm.begin(), perm.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  auto by_key = [&](size_t a, size_t b) { return keys[a] < keys[b]; };
  do {
    std::set<std::string> prefixes;
    SymIndex at;
    for (size_t i : perm) {
      at = at + units[i];
      prefixes.insert(at.str());
    }
    if (std::includes(prefixes.begin(), prefixes.end(), wanted.begin(), wanted.end())) {
      std::vector<SymIndex> out;
      for (size_t i : perm) out.push_back(units[i]);
      return out;
    }
  } while (std::next_permutation(perm.begin(), perm.end(), by_key));
  return units;
}

void collect_boundaries(const PolyRef& p, const std::string& var, std::set<int>* seen, std::vector<SymIndex>* out);

void collect_cond(const CondRef& c, const std::string& var, std::set<int>* seen, std::vector<SymIndex>* out) {
  if (!c || !seen->insert(-1 - c->id).second) return;
  if (c->poly) collect_boundaries(c->poly, var, seen, out);
  for (const CondRef& a : c->args) collect_cond(a, var, seen, out);
  if (c->kind != CondKind::IndexLt && c->kind != CondKind::IndexLe) return;
  auto it = c->index.terms().find(var);
  if (it == c->index.terms().end() || (it->second != 1 && it->second != -1)) return;
  SymIndex rest = c->index - SymIndex::var(var) * SymIndex::literal(it->second);
  for (const auto& kv : rest.terms())
    if (!ProofContext::current().is_size(kv.first)) return;  // depends on another index
  // var + rest < 0 is var < -rest; -var + rest < 0 is var >= rest + 1; <= adds one.
  bool le = c->kind == CondKind::IndexLe;
  SymIndex b = it->second == 1 ? SymIndex() - rest + SymIndex::literal(le ? 1 : 0)
                               : rest + SymIndex::literal(le ? 0 : 1);
  out->push_back(b);
}

void collect_boundaries(const PolyRef& p, const std::string& var, std::set<int>* seen, std::vector<SymIndex>* out) {
  if (!seen->insert(p->id).second) return;
  for (const Monomial& m : p->terms)
    for (const AtomRef& a : m.factors) {
      for (const PolyRef& q : a->args) collect_boundaries(q, var, seen, out);
      collect_cond(a->cond, var, seen, out);
    }
}

}  // namespace

bool is_composite(const SymIndex& extent) {
  if (extent.is_literal() || extent.constant() < 0) return false;
  int64_t units = extent.constant() > 0 ? 1 : 0;
  for (const auto& kv : extent.terms()) {
    if (kv.second < 0) return false;
    units += kv.second;
  }
  return units > 1;
}

std::vector<SymIndex> select_boundaries(const PolyRef& p, const std::string& var) {
  std::set<int> seen;
  std::vector<SymIndex> out;
  collect_boundaries(p, var, &seen, &out);
  return out;
}

std::vector<RangePiece> split_range(const SymIndex& extent, const std::vector<SymIndex>& boundaries) {
  bool negative = false;
  std::vector<SymIndex> units = extent_units(extent, &negative);
  if (negative) return {{SymIndex(), extent, false}};  // K - 1 and the like: one tile, not split
  std::vector<RangePiece> out;
  SymIndex at;
  for (const SymIndex& u : order_units(units, extent, boundaries)) {
    out.push_back({at, u, false});
    at = at + u;
  }
  int64_t lit = extent.constant();
  if (lit > 0 && lit <= kUnrollLimit) {
    for (int64_t p = 0; p < lit; ++p) out.push_back({at + SymIndex::literal(p), SymIndex::literal(1), true});
  } else if (lit > 0) {
    out.push_back({at, SymIndex::literal(lit), false});
  }
  return out;
}

std::vector<SymIndex> symbolic_shape(const Shape& placeholder_shape) {
  std::vector<SymIndex> s;
  for (int64_t d : placeholder_shape) s.push_back(SymIndex(d));
  return s;
}

namespace {
// The size N when `d` is c N with c > 1 (one size term, no literal part).
std::string multiple_of(const SymIndex& d) {
  if (d.is_literal() || !d.is_affine() || d.constant() != 0 || d.terms().size() != 1) return "";
  const auto& [name, c] = *d.terms().begin();
  return c > 1 && ProofContext::current().is_size(name) ? name : "";
}
}  // namespace

std::vector<std::vector<SymIndex>> output_index_cases(const std::vector<SymIndex>& shape,
                                                      const std::vector<std::vector<SymIndex>>& boundaries,
                                                      bool interleaved) {
  std::vector<std::vector<RangePiece>> per_axis;
  std::vector<std::string> interleave(shape.size());
  for (size_t a = 0; a < shape.size(); ++a) {
    const SymIndex& d = shape[a];
    if (interleaved && !multiple_of(d).empty()) {
      interleave[a] = multiple_of(d);
      per_axis.push_back({{SymIndex(), d, false}});
    } else if (d.is_literal() && d.constant() == 1) {
      per_axis.push_back({{SymIndex(), SymIndex::literal(1), true}});
    } else if (!is_composite(d)) {
      per_axis.push_back({{SymIndex(), d, false}});  // one variable over the whole axis
    } else {
      per_axis.push_back(split_range(d, a < boundaries.size() ? boundaries[a] : std::vector<SymIndex>{}));
    }
  }
  std::vector<std::vector<SymIndex>> cases;
  ProofContext& s = ProofContext::current();
  for (const auto& combo : combos(per_axis)) {
    std::vector<SymIndex> idx;
    for (size_t a = 0; a < combo.size(); ++a) {
      const RangePiece& p = combo[a];
      if (!interleave[a].empty()) {
        const int64_t c = shape[a].terms().begin()->second;
        SymIndex outer = SymIndex::var(s.fresh_var("o", SymIndex::var(interleave[a])));
        SymIndex inner = SymIndex::var(s.fresh_var("o", SymIndex::literal(c)));
        idx.push_back(outer * SymIndex::literal(c) + inner);
        continue;
      }
      idx.push_back(p.point ? p.offset : p.offset + SymIndex::var(s.fresh_var("o", p.extent)));
    }
    cases.push_back(std::move(idx));
  }
  return cases;
}

SymReal GraphEncoder::value(NodeId id, const std::vector<SymIndex>& o) {
  auto key = std::make_pair(id, index_key(o));
  auto it = memo_.find(key);
  if (it != memo_.end()) return it->second;
  const Node& n = g_[id];
  AXON_CHECK(static_cast<int>(o.size()) == n.type.rank()) << "index rank for %" << id;
  SymReal v;
  switch (n.op) {
    case Op::Param:
      v = SymReal(param(g_.params.at(n.attrs.ints[0]).name, o));
      break;
    case Op::Constant:
      v = body<SymReal>(n, {}, SymReal());
      break;
    case Op::Iota:
      v = body<SymReal>(n, {SymReal(index_value(o[n.attrs.ints[0]]))}, SymReal());
      break;
    case Op::Concat:
      v = body<SymReal>(n, {concat(n, o, 0)}, SymReal());
      break;
    default:
      if (!reduction_domain(g_, n).extents.empty() || is_reduction(n.op) || n.op == Op::Einsum) {
        v = reduction(n, o);
        break;
      }
      {
        std::vector<SymReal> args;
        for (size_t k = 0; k < n.args.size(); ++k)
          args.push_back(value(n.args[k], operand_index<SymIndex>(g_, n, static_cast<int>(k), o, {})));
        v = body<SymReal>(n, args, SymReal());
      }
  }
  memo_.emplace(key, v);
  return v;
}

SymReal GraphEncoder::concat(const Node& n, const std::vector<SymIndex>& o, size_t k) {
  int axis = static_cast<int>(n.attrs.ints[0]);
  std::vector<int64_t> off = concat_offsets(g_, n);
  auto operand = [&](size_t j) {
    return value(n.args[j], operand_index<SymIndex>(g_, n, static_cast<int>(j), o, {}));
  };
  if (k + 1 == n.args.size()) return operand(k);
  // Operand k covers [off[k], off[k+1]); earlier operands were ruled out.
  CondRef in_k = index_cmp(CondKind::IndexLt, o[axis], SymIndex(off[k + 1]));
  if (in_k->kind == CondKind::True) return operand(k);
  if (in_k->kind == CondKind::False) return concat(n, o, k + 1);
  return where(SymReal(in_k), operand(k), concat(n, o, k + 1));
}

std::vector<std::vector<SymIndex>> GraphEncoder::reduction_boundaries(const Node& n, const std::vector<SymIndex>& o,
                                                                      const std::vector<SymIndex>& extents) {
  std::vector<std::vector<SymIndex>> out(extents.size());
  bool composite = false;
  for (const SymIndex& e : extents) composite = composite || is_composite(e);
  if (!composite) return out;
  // The body once over the whole range, to see where its selects switch.
  ProofContext& s = ProofContext::current();
  std::vector<SymIndex> r;
  std::vector<std::string> vars;
  for (const SymIndex& e : extents) {
    vars.push_back(s.fresh_var("w", e));
    r.push_back(SymIndex::var(vars.back()));
  }
  std::vector<SymReal> args;
  for (size_t k = 0; k < n.args.size(); ++k)
    args.push_back(value(n.args[k], operand_index<SymIndex>(g_, n, static_cast<int>(k), o, r)));
  PolyRef b = body<SymReal>(n, args, SymReal()).poly();
  for (size_t a = 0; a < extents.size(); ++a) out[a] = select_boundaries(b, vars[a]);
  return out;
}

SymReal GraphEncoder::reduction(const Node& n, const std::vector<SymIndex>& o) {
  ReductionDomain dom = reduction_domain(g_, n);
  ProofContext& s = ProofContext::current();
  std::vector<SymIndex> extents;
  for (int64_t e : dom.extents) extents.push_back(SymIndex(e));
  std::vector<std::vector<SymIndex>> boundaries = reduction_boundaries(n, o, extents);
  std::vector<std::vector<RangePiece>> per_axis;
  for (size_t a = 0; a < extents.size(); ++a) {
    const SymIndex& ext = extents[a];
    if (dom.combine != Combine::Sum) {
      bool nonempty = ext.constant() >= (ext.is_literal() ? 1 : 0);
      for (const auto& kv : ext.terms()) nonempty = nonempty && kv.second > 0;
      if (!nonempty)
        AXON_UNSUPPORTED() << "a max or min over the range " << ext.str()
                           << " that may be empty (its value would be an infinity)";
    }
    per_axis.push_back(split_range(ext, boundaries[a]));
  }
  bool first = true;
  SymReal acc;
  for (const auto& combo : combos(per_axis)) {
    std::vector<Binder> binders;
    std::vector<SymIndex> r;
    for (const RangePiece& p : combo) {
      if (p.point) {
        r.push_back(p.offset);
        continue;
      }
      std::string v = s.fresh_var("r", p.extent);
      binders.push_back({v, p.extent});
      r.push_back(p.offset + SymIndex::var(v));
    }
    std::vector<SymReal> args;
    for (size_t k = 0; k < n.args.size(); ++k)
      args.push_back(value(n.args[k], operand_index<SymIndex>(g_, n, static_cast<int>(k), o, r)));
    PolyRef b = body<SymReal>(n, args, SymReal()).poly();
    SymReal tile;
    switch (dom.combine) {
      case Combine::Sum: tile = SymReal(sum_over(binders, b)); break;
      case Combine::Max: tile = SymReal(extremum_over(AtomKind::Max, binders, b)); break;
      case Combine::Min: tile = SymReal(extremum_over(AtomKind::Min, binders, b)); break;
      case Combine::None: AXON_CHECK(false) << "reduction without a combine";
    }
    acc = first ? tile : combine_step(dom.combine, acc, tile);
    first = false;
  }
  if (first) acc = SymReal(zero());  // an empty sum (empty max/min were refused above)
  return acc;
}

}  // namespace axon::verify::smt
