#include "tile/row_function.h"

#include <limits>
#include <map>
#include <set>

#include "ir/element_def.h"
#include "support/diagnostic.h"
#include "tile/inline_value.h"

namespace axon::tile {

namespace {

// The reductions in id's cone, ascending (an argument's before its user's).
void reductions_in(const ir::Graph& g, ir::NodeId id, std::set<ir::NodeId>* seen, std::set<ir::NodeId>* out) {
  if (!seen->insert(id).second) return;
  const ir::Node& n = g[id];
  if (!ir::reduction_domain(g, n).extents.empty()) out->insert(id);
  for (ir::NodeId a : n.args) reductions_in(g, a, seen, out);
}

}  // namespace

Stmt row_function(Kernel* k, const ir::Graph& g, ir::NodeId out, const std::vector<Index>& lead,
                  const std::function<Value(int param, const std::vector<Index>& idx)>& param, int dst,
                  const Index& dst_offset, const std::string& tag, const std::string& var) {
  const ir::Type& ot = g[out].type;
  if (ot.rank() != static_cast<int>(lead.size()) + 1)
    throw InternalError("row_function: the value's rank is not the row's indices plus one");
  std::set<ir::NodeId> seen, reds;
  reductions_in(g, out, &seen, &reds);
  std::map<ir::NodeId, int> reg;  // reduction -> its register
  // A reduction already computed is its register, at any index: the
  // contract (one row, read at that row) makes the index the row's.
  LeafFn leaf = [&](ir::NodeId id, const std::vector<Index>&) -> std::optional<Value> {
    auto it = reg.find(id);
    if (it == reg.end()) return std::nullopt;
    return Value::load(it->second, {}, g[id].type.dtype);
  };
  std::vector<Stmt> body;
  const Index d = Index::var(var);
  for (ir::NodeId r : reds) {
    const ir::Node& n = g[r];
    const ir::ReductionDomain dom = ir::reduction_domain(g, n);
    const ir::Type& at = g[n.args.at(0)].type;
    if (dom.extents.size() != 1 || n.attrs.ints != std::vector<int64_t>{at.rank() - 1} || at.shape != ot.shape ||
        n.type.rank() != static_cast<int>(lead.size()))
      throw InternalError(std::string("row_function: a ") + ir::op_name(n.op) + " that is not over the row's last axis");
    const int acc = k->add_buffer({tag + std::to_string(reg.size()), n.type.dtype, {}, Scope::Register});
    const double init = dom.combine == ir::Combine::Sum   ? 0.0
                        : dom.combine == ir::Combine::Max ? -std::numeric_limits<double>::infinity()
                                                          : std::numeric_limits<double>::infinity();
    Value term = inline_value(g, n.args[0], ir::operand_index<Index>(g, n, 0, lead, {d}), param, leaf);
    body.push_back(Stmt::alloc(acc));
    body.push_back(Stmt::store(acc, {}, Value::constant(init, n.type.dtype)));
    body.push_back(Stmt::loop(var, Index(ot.shape.back()), LoopKind::Vectorized, Stmt::accumulate(acc, {}, dom.combine, term)));
    reg[r] = acc;
  }
  std::vector<Index> at = lead;
  at.push_back(d);
  body.push_back(Stmt::loop(var, Index(ot.shape.back()), LoopKind::Vectorized,
                            Stmt::store(dst, {dst_offset + d}, inline_value(g, out, at, param, leaf))));
  return Stmt::seq(std::move(body));
}

}  // namespace axon::tile
