#include "ir/graph.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "ir/verify.h"

namespace axon::ir {

namespace {
uint64_t mix(uint64_t h, uint64_t v) {
  // splitmix-style combine: cheap and well spread.
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}
uint64_t bits_of(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
uint64_t hash_attrs(uint64_t h, const Attrs& a) {
  for (int64_t v : a.ints) h = mix(h, static_cast<uint64_t>(v));
  h = mix(h, 0xa5);
  for (int64_t v : a.ints2) h = mix(h, static_cast<uint64_t>(v));
  h = mix(h, bits_of(a.value));
  for (char c : a.text) h = mix(h, static_cast<unsigned char>(c));
  return h;
}
uint64_t hash_type(uint64_t h, const Type& t) {
  h = mix(h, static_cast<uint64_t>(t.dtype));
  for (int64_t d : t.shape) h = mix(h, static_cast<uint64_t>(d));
  return mix(h, t.shape.size());
}
}  // namespace

bool Attrs::operator==(const Attrs& o) const {
  // Constants compare by bit pattern so that -0.0 and NaN payloads stay distinct.
  return ints == o.ints && ints2 == o.ints2 && bits_of(value) == bits_of(o.value) && text == o.text;
}

bool Node::operator==(const Node& o) const {
  return op == o.op && type == o.type && args == o.args && attrs == o.attrs;
}

uint64_t hash_node(const Node& n) {
  uint64_t h = mix(0, static_cast<uint64_t>(n.op));
  h = hash_type(h, n.type);
  for (NodeId a : n.args) h = mix(h, static_cast<uint64_t>(a));
  return hash_attrs(h, n.attrs);
}

NodeId Graph::make(Node n) {
  for (NodeId a : n.args) AXON_CHECK(a >= 0 && a < size()) << "operand %" << a << " does not exist";
  verify_node(*this, n);
  uint64_t h = hash_node(n);
  auto& bucket = by_hash_[h];
  for (NodeId id : bucket)
    if (nodes_[id] == n) return id;
  nodes_.push_back(std::move(n));
  NodeId id = size() - 1;
  bucket.push_back(id);
  return id;
}

uint64_t Graph::structural_hash() const {
  // Hash each node by content with operands replaced by their hashes.
  std::vector<uint64_t> hs(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    uint64_t h = mix(0, static_cast<uint64_t>(n.op));
    h = hash_type(h, n.type);
    for (NodeId a : n.args) h = mix(h, hs[a]);
    hs[i] = hash_attrs(h, n.attrs);
  }
  uint64_t h = mix(0, params.size());
  for (const ParamInfo& p : params) h = hash_type(h, p.type);
  for (NodeId o : outputs) h = mix(h, hs[o]);
  return h;
}

Graph compact(const Graph& g) {
  std::vector<bool> live(g.size(), false);
  for (NodeId o : g.outputs) live[o] = true;
  for (int i = g.size() - 1; i >= 0; --i)
    if (live[i])
      for (NodeId a : g[i].args) live[a] = true;
  Graph out;
  out.entry = g.entry;
  out.params = g.params;
  std::vector<NodeId> remap(g.size(), -1);
  for (int i = 0; i < g.size(); ++i) {
    if (!live[i]) continue;
    Node n = g[i];
    for (NodeId& a : n.args) a = remap[a];
    remap[i] = out.make(std::move(n));
    auto loc = g.locs.find(i);
    if (loc != g.locs.end()) out.note_loc(remap[i], loc->second);
  }
  for (NodeId o : g.outputs) out.outputs.push_back(remap[o]);
  return out;
}

// ---- builders ----

namespace {
NodeId make_node(Graph& g, Op op, Type type, std::vector<NodeId> args, Attrs attrs = {}) {
  return g.make(Node{op, std::move(type), std::move(args), std::move(attrs)});
}
}  // namespace

NodeId param(Graph& g, int index) {
  AXON_CHECK(index >= 0 && index < static_cast<int>(g.params.size())) << "no parameter " << index;
  Attrs a;
  a.ints = {index};
  return make_node(g, Op::Param, g.params[index].type, {}, a);
}

NodeId constant(Graph& g, double value, DType dtype) {
  Attrs a;
  a.value = value;
  return make_node(g, Op::Constant, Type{dtype, {}}, {}, a);
}

NodeId iota(Graph& g, const Shape& shape, int axis, DType dtype) {
  Attrs a;
  a.ints = {axis};
  return make_node(g, Op::Iota, Type{dtype, shape}, {}, a);
}

NodeId unary(Graph& g, Op op, NodeId x) {
  AXON_CHECK(op_arity(op) == 1 && is_elementwise(op) && op != Op::Cast) << op_name(op);
  Type t = g[x].type;
  return make_node(g, op, t, {x});
}

NodeId cast(Graph& g, NodeId x, DType to) {
  Type t = g[x].type;
  if (t.dtype == to) return x;
  t.dtype = to;
  return make_node(g, Op::Cast, t, {x});
}

NodeId binary(Graph& g, Op op, NodeId a, NodeId b) {
  AXON_CHECK(op_arity(op) == 2 && is_elementwise(op)) << op_name(op);
  Type t = g[a].type;
  if (has_property(op, Comparison)) t.dtype = DType::Bool;
  return make_node(g, op, t, {a, b});
}

NodeId select(Graph& g, NodeId cond, NodeId a, NodeId b) {
  return make_node(g, Op::Select, g[a].type, {cond, a, b});
}

NodeId reduce(Graph& g, Op op, NodeId x, std::vector<int64_t> axes) {
  std::sort(axes.begin(), axes.end());
  const Type& in = g[x].type;
  Type t{in.dtype, {}};
  for (int i = 0; i < in.rank(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), i)) t.shape.push_back(in.shape[i]);
  Attrs a;
  a.ints = std::move(axes);
  return make_node(g, op, t, {x}, a);
}

bool parse_einsum(const std::string& text, EinsumSpec* out) {
  size_t comma = text.find(',');
  size_t arrow = text.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || comma > arrow) return false;
  out->a = text.substr(0, comma);
  out->b = text.substr(comma + 1, arrow - comma - 1);
  out->out = text.substr(arrow + 2);
  auto letters = [](const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
  };
  if (!letters(out->a) || !letters(out->b) || !letters(out->out)) return false;
  std::set<char> seen(out->out.begin(), out->out.end());
  if (seen.size() != out->out.size()) return false;
  for (char c : out->out)
    if (out->a.find(c) == std::string::npos && out->b.find(c) == std::string::npos) return false;
  return true;
}

std::string EinsumSpec::reduced() const {
  std::string r;
  for (char c : a + b)
    if (out.find(c) == std::string::npos && r.find(c) == std::string::npos) r += c;
  return r;
}

NodeId einsum(Graph& g, const std::string& spec, NodeId a, NodeId b) {
  EinsumSpec s;
  AXON_CHECK(parse_einsum(spec, &s)) << "malformed einsum spec '" << spec << "'";
  const Type& ta = g[a].type;
  const Type& tb = g[b].type;
  Type t{ta.dtype, {}};
  for (char c : s.out) {
    size_t i = s.a.find(c);
    t.shape.push_back(i != std::string::npos ? ta.shape.at(i) : tb.shape.at(s.b.find(c)));
  }
  Attrs at;
  at.text = spec;
  return make_node(g, Op::Einsum, t, {a, b}, at);
}

NodeId broadcast(Graph& g, NodeId x, const Shape& to) {
  if (g[x].type.shape == to) return x;
  return make_node(g, Op::Broadcast, Type{g[x].type.dtype, to}, {x});
}

NodeId reshape(Graph& g, NodeId x, const Shape& to) {
  if (g[x].type.shape == to) return x;
  return make_node(g, Op::Reshape, Type{g[x].type.dtype, to}, {x});
}

NodeId transpose(Graph& g, NodeId x, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity && static_cast<int>(perm.size()) == g[x].type.rank()) return x;
  const Type& in = g[x].type;
  Type t{in.dtype, {}};
  for (int64_t p : perm) t.shape.push_back(in.shape.at(p));
  Attrs a;
  a.ints = perm;
  return make_node(g, Op::Transpose, t, {x}, a);
}

NodeId slice(Graph& g, NodeId x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
             const Shape& out_shape) {
  const Type& in = g[x].type;
  bool identity = in.shape == out_shape;
  for (size_t i = 0; i < starts.size() && identity; ++i) identity = starts[i] == 0 && steps[i] == 1;
  if (identity) return x;
  Attrs a;
  a.ints = starts;
  a.ints2 = steps;
  return make_node(g, Op::Slice, Type{in.dtype, out_shape}, {x}, a);
}

NodeId concat(Graph& g, const std::vector<NodeId>& parts, int axis) {
  AXON_CHECK(!parts.empty()) << "concat of nothing";
  if (parts.size() == 1) return parts[0];
  Type t = g[parts[0]].type;
  t.shape.at(axis) = 0;
  for (NodeId p : parts) t.shape[axis] += g[p].type.shape.at(axis);
  Attrs a;
  a.ints = {axis};
  return make_node(g, Op::Concat, t, parts, a);
}

}  // namespace axon::ir
