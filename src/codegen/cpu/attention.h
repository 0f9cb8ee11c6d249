// The Attention stage (loop/attention_group.h) for the CPU: its knobs, their
// legality and cost, and its kernel, the tile program of
// tile/lower_attention.h printed by codegen/c_like/tile_cpp.h.
//
/// Knobs, prefix "k<i>.attn.": bq (query rows per block: divides M, a
/// multiple of the register tile's rows), bk (key rows per block: divides
/// N), threads (over the batch and the key ranges), kt (1: K^T packed and
/// the scores register-tiled matmuls; 0: dot products, for few query rows),
/// split (split-KV: key ranges per batch, combined after; 1, 2, 3, 4, 6, 8,
/// 16, 32 up to the number of 64-key blocks, 2 first when the batch has
/// fewer items than the host has cores).
/// The register tile is the ISA's: 4 x 64 with AVX-512, 4 x 16 with AVX2,
/// 4 x 4 scalar.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_source.h"
#include "ir/graph.h"
#include "loop/partition.h"
#include "schedule/schedule.h"
#include "target/target.h"
#include "tile/lower_attention.h"

namespace axon::codegen {

tile::AttentionShape attention_shape_of(const loop::AttentionGroup& a);

std::vector<schedule::Knob> attention_knobs(const loop::AttentionGroup& a, const target::Target& t,
                                            const std::string& prefix);
/// Missing knobs take their defaults (values[0] of attention_knobs).
tile::AttentionSchedule attention_schedule_from(const loop::AttentionGroup& a, const schedule::Schedule& s,
                                                const target::Target& t, const std::string& prefix);
std::string attention_why_illegal(const loop::AttentionGroup& a, const tile::AttentionSchedule& s);
double attention_seconds(const loop::AttentionGroup& a, const tile::AttentionSchedule& s, const target::Target& t);

/// The stage's tile program (tile/lower_attention.h), verified.
tile::Kernel attention_kernel(const ir::Graph& g, const loop::AttentionGroup& a, const tile::AttentionSchedule& s,
                              const std::string& fn);

}  // namespace axon::codegen
