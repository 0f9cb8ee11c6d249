// The roofline floor: a time no correct kernel for the graph can beat on
// any machine the gate runs on, used to catch kernels that skip their work
// when called repeatedly (memo tables, results computed ahead of time).
//
// FLOPs count what the spec writes: 2 per einsum multiply-add, 1 per
// element of an elementwise op, 1 per reduced element; nodes whose value
// does not depend on any parameter (masks, constants) cost nothing, since a
// kernel may precompute them. Bytes are every input and output buffer once.
// floor = max(flops / peak_flops, bytes / peak_bytes), with peaks from
// GateOptions (all cores, generous per-core rates).
#pragma once

#include "gate/gate.h"

namespace axon::gate {

Roofline roofline_floor(const ir::Graph& g, const GateOptions& opts);

}  // namespace axon::gate
