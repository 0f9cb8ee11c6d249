// The work a graph asks for, as the roofline counts it (docs/bench.md, "The
// roofline"): FLOPs and the bytes that must cross the memory bus at least once.
//
/// FLOPs: 2 per einsum multiply-add, 1 per element of an elementwise op, 1 per
/// reduced element; nodes that depend on no parameter cost nothing (a kernel
/// may precompute them). Bytes: every input buffer read once and every output
/// buffer written once. Read-only: the graph is not changed.
#pragma once

#include "ir/graph.h"

namespace axon::analysis {

struct Cost {
  double flops = 0;
  double contraction_flops = 0;  // the einsums' part of flops
  double bytes = 0;
  double bytes_written = 0;  // the outputs' part of bytes
};

Cost graph_cost(const ir::Graph& g);

/// The roofline floor in milliseconds: max(flops / peak FLOP/s, bytes / peak
/// B/s); 0 when either peak is unknown (<= 0).
double roofline_floor_ms(const Cost& c, double peak_gflops, double peak_gbs);

}  // namespace axon::analysis
