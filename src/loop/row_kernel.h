// The loop-level plan of memory-bound stages: the row form.
//
/// A graph in the row form is one loop nest `for r in rows (parallel): passes over
/// c in [0, cols) (vectorised)` that computes a whole graph of elementwise
/// maps, broadcasts, keepdims reshapes and reductions over the last axis, so
/// that softmax, layernorm, rmsnorm or add+layernorm read each input row
/// from memory once: every pass after the first re-reads the row while it
/// sits in L1/L2. plan_row_kernel decides, for each live node, the Level at
/// which it varies (which sets its place: Uniform and PerRow values are
/// scalars in registers, Row and PerCol values are vectors recomputed inside
/// each pass that needs them, never materialised), and the passes: one per
/// reduction, in topological order, then one that stores the row outputs.
///
/// Requires: a verified graph. Ensures: when ok, every live node has exactly
/// one Level (Params and Constants may be read at several), element (r, c)
/// of a node at Level L is at flat index flat_index(L) of its buffer, and
/// every dtype is f32 (bool for intermediates and parameters: a bool
/// parameter is read as 1.0f / 0.0f, the truth values of the emitters). When not ok, `why` says
/// what is outside the row-kernel form (docs/loop_ir.md) and the caller
/// falls back to one loop nest per node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace axon::loop {

/// How a value varies over the (row r, column c) iteration space; also
/// where it lives: Uniform and PerRow in scalar registers, Row and PerCol in
/// vector registers inside a pass.
/// RowTile: a value whose rows repeat with period tile_rows (a [1, R, C]
/// buffer broadcast to [B, R, C]); a vector like Row.
enum class Level { None, Uniform, PerRow, PerCol, Row, RowTile };

/// "r * cols + c", "(r % tile_rows) * cols + c", "r", "c" or "0": the flat
/// element of a buffer at Level l.
const char* flat_index(Level l);

struct RowKernel {
  bool ok = false;
  std::string why;     // when !ok
  int64_t rows = 0, cols = 0;
  int64_t tile_rows = 0;  // the period of RowTile values (0: none)
  std::vector<bool> live;              // per node
  std::vector<Level> level;            // per node (None: not live, or a Param read at param_levels)
  std::vector<std::vector<Level>> param_levels;  // per node: the Levels a Param/Constant is read at
  std::vector<ir::NodeId> reductions;  // one pass each, in topological order
  std::vector<ir::NodeId> row_outputs; // outputs stored by the last pass
  /// The live Params read a whole row at a time (Level::Row), ascending:
  /// the streams a row brings in from memory.
  std::vector<ir::NodeId> row_params;
  /// Bytes moved to and from memory when each input is read once and each
  /// output written once.
  int64_t min_bytes = 0;
  /// Vector instructions per (r, c) of the elementwise ops at vector
  /// levels: one per arithmetic op, the length of its routine for a
  /// transcendental (op_weight); the compute half of the cost model.
  int64_t ops_per_element = 0;
  int passes() const { return static_cast<int>(reductions.size()) + (row_outputs.empty() ? 0 : 1); }
};

RowKernel plan_row_kernel(const ir::Graph& g);

/// Vector instructions one element of `op` costs in a vector loop: 1 for
/// + - * and compares; a division's throughput; the instruction count of
/// the vector routine (codegen/cpu/vector_math.h) for exp, log, tanh, sqrt;
/// a lane-by-lane libm call for the rest of the transcendentals.
int op_weight(ir::Op op);

}  // namespace axon::loop
