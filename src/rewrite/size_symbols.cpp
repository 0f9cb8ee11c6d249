#include "rewrite/size_symbols.h"

#include <algorithm>
#include <optional>
#include <set>

#include "ir/element_def.h"

namespace axon::rewrite {

namespace {

using ir::Graph;
using ir::Op;
using ir::Shape;

constexpr int64_t kMaxTimes = 4096;  // below the prover's literal limit (proof_context.h)

std::string symbol(int64_t v) { return "n" + std::to_string(v); }

Shape non_unit(const Shape& s) {
  Shape out;
  for (int64_t d : s)
    if (d != 1) out.push_back(d);
  return out;
}

// One size and the parts a reshape splits it into (or merges into it), in
// row-major order: the groups of axes of equal product on the two sides
// where one side is a single axis.
struct Split {
  int64_t size;
  Shape parts;
};
std::optional<std::vector<Split>> splits_of(const Shape& a, const Shape& b) {
  Shape x = non_unit(a), y = non_unit(b);
  std::vector<Split> out;
  size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    Shape gx = {x[i++]}, gy = {y[j++]};
    int64_t px = gx[0], py = gy[0];
    while (px != py) {
      if (px < py) {
        if (i == x.size()) return std::nullopt;
        px *= x[i];
        gx.push_back(x[i++]);
      } else {
        if (j == y.size()) return std::nullopt;
        py *= y[j];
        gy.push_back(y[j++]);
      }
    }
    if (gx.size() == 1 && gy.size() > 1) out.push_back({gx[0], gy});
    if (gy.size() == 1 && gx.size() > 1) out.push_back({gy[0], gx});
  }
  if (i != x.size() || j != y.size()) return std::nullopt;
  return out;
}

// The derived sizes of g's reshapes with the literal parts they keep; empty
// when the readings conflict.
std::vector<SizeSymbols::Derived> derived_sizes(const Graph& g, int64_t split_size, std::set<int64_t>* literal) {
  std::map<int64_t, std::pair<int64_t, int64_t>> by_size;  // size -> (times, outer part)
  for (ir::NodeId i = 0; i < g.size(); ++i) {
    const ir::Node& n = g[i];
    if (n.op != Op::Reshape) continue;
    const Shape& in = g[n.args.at(0)].type.shape;
    if (ir::same_non_unit_axes(in, n.type.shape)) continue;
    std::optional<std::vector<Split>> s = splits_of(in, n.type.shape);
    if (!s) return {};
    for (const Split& sp : *s) {
      int64_t times = 1;
      for (size_t p = 1; p < sp.parts.size(); ++p) {
        times *= sp.parts[p];
        literal->insert(sp.parts[p]);
      }
      const std::pair<int64_t, int64_t> reading{times, sp.parts.front()};
      auto [it, fresh] = by_size.emplace(sp.size, reading);
      if (!fresh && it->second != reading) return {};
      if (times > kMaxTimes) return {};
    }
  }
  std::vector<SizeSymbols::Derived> out;
  for (const auto& [size, reading] : by_size) {
    if (literal->count(size) || literal->count(reading.second) || by_size.count(reading.second) ||
        size == split_size || literal->count(split_size))
      return {};
    out.push_back({size, reading.first, reading.second, symbol(reading.second)});
  }
  return out;
}

}  // namespace

std::map<int64_t, int64_t> SizeSymbols::at(const verify::smt::DimSizes& d) const {
  std::map<int64_t, int64_t> sizes;
  for (const auto& [name, v] : free) sizes[v] = d.at(name);
  for (const Derived& x : derived) sizes[x.size] = x.times * d.at(x.part);
  if (!split_a.empty()) sizes[split_size] = d.at(split_a) + d.at(split_b);
  return sizes;
}

SizeSymbols size_symbols(const Graph& g, int64_t split_size) {
  SizeSymbols out;
  std::set<int64_t> literal;
  out.derived = derived_sizes(g, split_size, &literal);
  if (out.derived.empty()) literal.clear();
  std::set<int64_t> values;
  for (const auto& p : g.params)
    for (int64_t d : p.type.shape)
      if (d > 1) values.insert(d);
  std::set<int64_t> derived;
  for (const SizeSymbols::Derived& x : out.derived) {
    derived.insert(x.size);
    values.insert(x.part_size);
  }
  for (int64_t v : values) {
    if (literal.count(v) || derived.count(v)) continue;
    if (static_cast<int>(out.dims.size()) + 2 > verify::smt::kMaxSymbols) break;
    if (v == split_size) {
      out.split_size = v;
      out.split_a = symbol(v) + "a";
      out.split_b = symbol(v) + "b";
      out.dims.push_back(out.split_a);
      out.dims.push_back(out.split_b);
      continue;
    }
    out.dims.push_back(symbol(v));
    out.free[out.dims.back()] = v;
  }
  // A derived size whose outer part got no symbol (too many sizes) stays
  // literal, and so does the reshape.
  std::vector<SizeSymbols::Derived> kept;
  for (const SizeSymbols::Derived& x : out.derived)
    if (out.free.count(x.part)) kept.push_back(x);
  out.derived = kept;
  return out;
}

}  // namespace axon::rewrite
