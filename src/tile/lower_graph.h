// Lowering a graph to the tile IR: one loop nest per live node, in node
// order (the graph's topological order). This is the first form of every
// kernel; passes (tile/passes/) fuse, split, parallelise and vectorise it.
//
/// Requires: a verified graph. Ensures: a kernel whose Input buffers are the
/// graph's params (in order, used or not) and whose Output buffers are its
/// outputs (in order); verify(kernel) is empty; running it (tile/interpret.h)
/// computes what verify::interpret computes on the graph, term for term in
/// the same order.
///
/// Loop nests: output axes outermost, in order; unit axes get no loop.
///  - An elementwise, layout or iota node: for o: t[o] = body(operands).
///  - A reduction (and an einsum the next rule does not take): for o:
///    { acc = identity; for r: acc combine= body(...); t[o] = acc } with acc
///    a Register buffer (ir/element_def.h's combine_identity and
///    combine_step).
///  - A sum-einsum of a natively computed dtype with at most kIkjMaxTerms
///    terms per output: t = 0, then for the leading output axes, the
///    reduction axes, the last output axis: t[o] += a * b (i, k, j order:
///    the innermost loop is contiguous).
///  - Concat: one nest per operand, over its slab of the axis.
/// Values that are the same literal everywhere (constants and the maps and
/// layout ops of constants) are not materialised: their readers get the
/// literal expression. Every other value lives in a Memory buffer between
/// Alloc (before its nest) and Free (after its last use), or in its Output
/// buffer. Outputs that are params, or a value returned twice, are copies.
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "tile/kernel.h"

namespace axon::tile {

/// Above this many terms per output element, a sum-einsum takes the
/// accumulator form, whose sum the cascade_sums pass can block.
inline constexpr int64_t kIkjMaxTerms = 1 << 16;

Kernel lower_graph(const ir::Graph& g, const std::string& name = "");

}  // namespace axon::tile
