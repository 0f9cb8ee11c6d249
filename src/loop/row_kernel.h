// The loop-level plan of memory-bound stages: the row form.
//
/// A graph in the row form is one loop nest `for r in rows (parallel): passes over
/// c in [0, cols) (vectorised)` that computes a whole graph of elementwise
/// maps, broadcasts, keepdims reshapes and reductions over the last axis, so
/// that softmax, layernorm, rmsnorm or add+layernorm read each input row
/// from memory once: every pass after the first re-reads the row while it
/// sits in L1/L2. plan_row_kernel decides whether a graph is in that form,
/// by giving each live node the level at which it varies over (row r,
/// column c): uniform or per row (a scalar), per column, per element, or per
/// element of rows that repeat (a [1, R, C] value broadcast to [B, R, C]);
/// and lists the passes: one per reduction, in topological order, then one
/// that stores the row outputs. The partitioner makes such a graph a row
/// stage, whose tile program (tile/lower_graph.h) the row knobs schedule.
///
/// Requires: a verified graph. Ensures: when ok, every live node varies at
/// exactly one level (Params and Constants may be read at several) and
/// every dtype is f32 (bool for intermediates and parameters). When not ok,
/// `why` says what is outside the row-kernel form (docs/loop_ir.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace axon::loop {

struct RowKernel {
  bool ok = false;
  std::string why;     // when !ok
  int64_t rows = 0, cols = 0;
  std::vector<ir::NodeId> reductions;  // one pass each, in topological order
  std::vector<ir::NodeId> row_outputs; // outputs stored by the last pass
  /// The live Params read a whole row at a time: the streams a row brings
  /// in from memory, ascending.
  std::vector<ir::NodeId> row_params;
  int passes() const { return static_cast<int>(reductions.size()) + (row_outputs.empty() ? 0 : 1); }
};

RowKernel plan_row_kernel(const ir::Graph& g);

/// Vector instructions one element of `op` costs in a vector loop: 1 for
/// + - * and compares; a division's throughput; the instruction count of
/// the vector routine (codegen/cpu/vector_math.h) for exp, log, tanh, sqrt;
/// a lane-by-lane libm call for the rest of the transcendentals.
int op_weight(ir::Op op);

}  // namespace axon::loop
