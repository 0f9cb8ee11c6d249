// row_function: one row of a graph value whose reductions all run over the
// last axis (an RMSNorm, a LayerNorm, a softmax of a row) as tile-IR
// statements that a lowering puts where the row is read: each reduction of
// the value's cone into a register over the row, in graph order (so a
// LayerNorm's variance reads its mean), then the row's elements into a
// buffer. The attention lowering uses it to normalise Q and K rows as it
// loads them (QK-norm, tile/lower_attention.h).
//
/// Requires: `out` has rank lead.size() + 1; every reduction in its cone
/// reduces the last axis alone of a value of out's shape, and its result
/// reaches `out` only at the same row (through elementwise ops, Broadcasts
/// along the last axis and Reshapes that add or drop unit axes:
/// loop/attention_prologue.h checks this before it fuses), so that one
/// register per reduction holds the row's value. Other nodes are inlined
/// (tile/inline_value.h); `param(p, idx)` reads graph parameter p.
/// Ensures: the statements store out[lead..., d] for d < width into
/// dst[dst_offset + d] (a vectorized loop over d named `var`); their
/// registers are new buffers of `k` named `tag`0, `tag`1, ...; values are
/// out's up to the order of each reduction's sum (docs/error_budget.md
/// bounds that).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "tile/kernel.h"

namespace axon::tile {

Stmt row_function(Kernel* k, const ir::Graph& g, ir::NodeId out, const std::vector<Index>& lead,
                  const std::function<Value(int param, const std::vector<Index>& idx)>& param, int dst,
                  const Index& dst_offset, const std::string& tag, const std::string& var = "rd");

}  // namespace axon::tile
