// plan_row_kernel: assigns each live node the Level it varies at, by
// walking from the outputs back to the leaves (a node's Level is what its
// consumers demand), and lists the reduction passes.
#include "loop/row_kernel.h"

#include <algorithm>

namespace axon::loop {

using namespace axon::ir;

namespace {

// How a value varies over the (row r, column c) iteration space. RowTile:
// rows that repeat with period tile_rows (a [1, R, C] buffer broadcast to
// [B, R, C]).
enum class Level { None, Uniform, PerRow, PerCol, Row, RowTile };

RowKernel fail(RowKernel k, const std::string& why) {
  k.ok = false;
  k.why = why;
  return k;
}

}  // namespace

int op_weight(Op op) {
  switch (op) {
    case Op::Exp: return 14;
    case Op::Log: return 18;
    case Op::Tanh: return 30;
    case Op::Sqrt:
    case Op::Div: return 4;
    case Op::Pow:
    case Op::Sin:
    case Op::Cos: return 40;
    case Op::Reshape:
    case Op::Broadcast: return 0;
    default: return 1;
  }
}

RowKernel plan_row_kernel(const Graph& g) {
  RowKernel k;
  const int n = g.size();
  std::vector<bool> live(n, false);
  for (NodeId o : g.outputs) live[o] = true;
  for (NodeId i = n - 1; i >= 0; --i)
    if (live[i])
      for (NodeId a : g[i].args) live[a] = true;
  if (g.outputs.empty()) return fail(k, "no outputs");

  // The iteration space: the largest live value (first such output, else
  // parameter), viewed as rows x its last axis.
  NodeId big = g.outputs[0];
  for (NodeId o : g.outputs)
    if (g[o].type.numel() > g[big].type.numel()) big = o;
  for (NodeId i = 0; i < n; ++i)
    if (live[i] && g[i].op == Op::Param && g[i].type.numel() > g[big].type.numel()) big = i;
  const Type& bt = g[big].type;
  if (bt.rank() == 0 || bt.numel() == 0) return fail(k, "the largest value is 0-d or empty");
  if (bt.shape.back() < 2) return fail(k, "rows of one element");
  k.cols = bt.shape.back();
  k.rows = bt.numel() / k.cols;
  int64_t tile_rows = 0;  // the period of RowTile values (0: none)

  auto size_of = [&](Level l) -> int64_t {
    switch (l) {
      case Level::Row: return k.rows * k.cols;
      case Level::PerRow: return k.rows;
      case Level::PerCol: return k.cols;
      case Level::RowTile: return tile_rows * k.cols;
      default: return 1;
    }
  };

  std::vector<std::vector<Level>> demand(n);
  auto need = [&](NodeId id, Level l) {
    if (std::find(demand[id].begin(), demand[id].end(), l) == demand[id].end()) demand[id].push_back(l);
  };
  std::vector<NodeId> seen;
  for (NodeId o : g.outputs) {
    const Node& nd = g[o];
    if (nd.op == Op::Param || nd.op == Op::Constant) return fail(k, "an output is a parameter or a constant");
    if (std::find(seen.begin(), seen.end(), o) != seen.end()) return fail(k, "a value is returned twice");
    seen.push_back(o);
    int64_t m = nd.type.numel();
    if (m == k.rows * k.cols) need(o, Level::Row), k.row_outputs.push_back(o);
    else if (m == k.rows) need(o, Level::PerRow);
    else return fail(k, "output %" + std::to_string(o) + " is neither per element nor per row");
  }

  std::vector<std::vector<Level>> param_levels(n);
  for (NodeId i = n - 1; i >= 0; --i) {
    if (!live[i]) continue;
    const Node& nd = g[i];
    const std::string at = "%" + std::to_string(i) + " (" + std::string(op_name(nd.op)) + ")";
    const bool is_out = std::find(g.outputs.begin(), g.outputs.end(), i) != g.outputs.end();
    if (nd.type.dtype != DType::F32 && (nd.type.dtype != DType::Bool || is_out))
      return fail(k, at + " is not f32");
    if (demand[i].empty()) return fail(k, at + " is live but unused");
    if (nd.op == Op::Param || nd.op == Op::Constant) {
      for (Level l : demand[i])
        if (nd.op == Op::Param && nd.type.numel() != size_of(l)) return fail(k, at + " is read at a level of another size");
      param_levels[i] = demand[i];
      continue;
    }
    if (demand[i].size() > 1) return fail(k, at + " is needed at two levels");
    const Level l = demand[i][0];
    if (nd.type.numel() != size_of(l)) return fail(k, at + " does not have the size of its level");
    if (nd.op == Op::Iota) return fail(k, at + ": iota is not in the row-kernel form");
    if (nd.op == Op::Cast) {
      DType from = g[nd.args[0]].type.dtype;
      if (!(from == DType::F32 || from == DType::Bool)) return fail(k, at + ": cast from a non-f32 type");
    }
    if (is_elementwise(nd.op)) {
      for (NodeId a : nd.args) need(a, l);
    } else if (is_reduction(nd.op)) {
      const Type& in = g[nd.args[0]].type;
      if (l != Level::PerRow) return fail(k, at + ": only reductions to one value per row are fused");
      if (nd.attrs.ints.size() != 1 || nd.attrs.ints[0] != in.rank() - 1 || in.shape.back() != k.cols ||
          in.numel() != k.rows * k.cols)
        return fail(k, at + ": reduces other than the row axis");
      need(nd.args[0], Level::Row);
      k.reductions.push_back(i);
    } else if (nd.op == Op::Reshape) {
      need(nd.args[0], l);
    } else if (nd.op == Op::Broadcast) {
      const Type& in = g[nd.args[0]].type;
      const Shape& out = nd.type.shape;
      if (in.numel() == nd.type.numel()) {
        need(nd.args[0], l);  // stretches nothing
      } else if (in.numel() == 1) {
        need(nd.args[0], Level::Uniform);
      } else if ((l == Level::Row || l == Level::RowTile) && out.back() == k.cols && in.rank() == nd.type.rank()) {
        const int r = in.rank();
        bool per_row = in.shape.back() == 1, per_col = in.shape.back() == k.cols;
        for (int a = 0; a + 1 < r; ++a) {
          per_row = per_row && in.shape[a] == out[a];
          per_col = per_col && in.shape[a] == 1;
        }
        // Leading unit axes stretched, the trailing ones kept: rows repeat.
        int lead = 0;
        while (lead < r && in.shape[lead] == 1 && out[lead] != 1) ++lead;
        bool tile = lead > 0 && in.shape.back() == k.cols;
        for (int a = lead; a < r; ++a) tile = tile && in.shape[a] == out[a];
        const int64_t period = in.numel() / k.cols;
        if (per_row && l == Level::Row) need(nd.args[0], Level::PerRow);
        else if (per_col) need(nd.args[0], Level::PerCol);
        else if (tile && l == Level::Row && (tile_rows == 0 || tile_rows == period) && k.rows % period == 0) {
          tile_rows = period;
          need(nd.args[0], Level::RowTile);
        } else {
          return fail(k, at + ": broadcasts along a middle axis");
        }
      } else {
        return fail(k, at + ": a broadcast outside the row-kernel form");
      }
    } else {
      return fail(k, at + " is not in the row-kernel form");
    }
  }
  std::reverse(k.reductions.begin(), k.reductions.end());
  for (NodeId i = 0; i < n; ++i)
    if (live[i] && g[i].op == Op::Param &&
        std::find(param_levels[i].begin(), param_levels[i].end(), Level::Row) != param_levels[i].end())
      k.row_params.push_back(i);
  k.ok = true;
  return k;
}

}  // namespace axon::loop
