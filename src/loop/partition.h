// Partitioning a graph into stages, each one kernel-sized piece of work
// that one code generator handles (docs/loop_ir.md, "Partitioning a graph
// into stages").
//
/// A Stage is one of
///  - Contraction: one float32 Einsum that is a (batched) matrix product,
///    read through views: Transpose, dense Reshape and unit-dim Broadcast
///    chains over its operands are folded into element strides, so a
///    transposed K or a reshaped q is never copied;
///  - Copy: a Transpose materialised from a buffer, as a strided view of it
///    (the tiled layout copy of tile/lower_copy.h), unless the loops of the
///    stage that reads it read it better in place: when its last axis stays
///    the buffer's unit-stride axis (16 elements or more), or when it is no
///    output and all that is computed from it is elementwise maps of its
///    shape (then transpose_blocks reads it in register-transposed blocks);
///  - Row: a subgraph in the fused row-kernel form (loop/row_kernel.h);
///  - Naive: any other subgraph (one loop nest per node);
///  - Attention: a contraction, a softmax over its last axis of an
///    elementwise score of it, and a contraction of the probabilities
///    (loop/attention_group.h), computed together without storing the
///    scores;
///  - Epilogue: a contraction and the elementwise work on its result (a
///    bias, a residual, an activation, a gate) computed on each tile of
///    the product before it is stored (loop/epilogue_group.h); or two
///    products over one A whose epilogues meet (a gated MLP's
///    silu(X W1) * (X W3)), computed together (loop/paired_epilogue.h).
///  A Contraction or Epilogue stage may also compute an operand where it
///  packs it (Prologue, loop/gemm_prologue.h): X * g as A.
/// Values that cross a stage boundary are materialised as dense row-major
/// buffers; everything else stays inside its stage. Stages are listed in an
/// order that respects their dependencies (the graph's topological order).
///
/// Requires: a verified graph. Ensures: every value an output needs is
/// computed by exactly one stage (Params are given, Constants are copied
/// into each subgraph that reads them); a Row or Naive stage's `sub` is a
/// verified graph whose params are bound, in order, to `inputs` and whose
/// outputs are, in order, `results`; a single stage covering the whole graph
/// is reported as such (whole_graph), so callers can emit it unchanged.
/// Contraction and Copy stages read their inputs through strides; the
/// layout nodes folded into those strides are not computed at all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "loop/row_kernel.h"

namespace axon::loop {

enum class StageKind { Contraction, Copy, Row, Naive, Attention, Epilogue };
const char* stage_kind_name(StageKind k);

/// C[b][m][n] = sum_k A[b][m][k] * B[b][k][n] over element strides of the
/// operands' base buffers (a stride of 0 broadcasts); the output is the
/// einsum's dense buffer, whose strides c_* follow its label order.
struct Contraction {
  int64_t batch = 1, M = 1, N = 1, K = 1;
  ir::NodeId a_base = -1, b_base = -1;
  int64_t a_batch = 0, a_m = 0, a_k = 0;
  int64_t b_batch = 0, b_k = 0, b_n = 0;
  int64_t c_batch = 0, c_m = 0, c_n = 0;
};

/// out (dense, the node's shape) [i...] = base[sum_a i[a] * in_strides[a]].
struct LayoutCopy {
  ir::NodeId base = -1;
  std::vector<int64_t> in_strides;
};

/// A value a stage computes from its inputs where it reads it, instead of
/// reading it from a buffer: node `out` of `graph` (a row stage's graph, or
/// the part of one computed at each element, its params bound to `inputs`,
/// the original values). Param `source` (of out's shape, float32) is read
/// in its place; the other params out reads, `reads` (ascending), follow
/// the stage's other inputs. out = -1: none, the value is read as it is.
///  - The Q (or K) of an attention computed from its row alone (QK-norm,
///    loop/attention_prologue.h): source as Stage::inputs[0] ([1]), reads
///    after the score's extras, Q's before K's.
///  - An operand of a Contraction or Epilogue stage computed where the GEMM
///    packs it (loop/gemm_prologue.h): elementwise over its params, dense
///    [rows, cols] or [batch, rows, cols] as the product reads it; source as
///    Stage::inputs[0] ([1]), reads after the stage's other inputs, A's
///    before B's.
struct Prologue {
  ir::Graph graph;
  ir::NodeId out = -1;
  int source = -1;
  std::vector<int> reads;
  std::vector<ir::NodeId> inputs;
  bool active() const { return out >= 0; }
};

/// softmax(score(S)) . V where S = Q . K^T (`qk`) and the product with V is
/// `pv` (its A operand the probabilities, dense [batch, M, N]). The score is
/// `score_graph`'s node `score` (elementwise over its params: param
/// `s_param` is S, param p != s_param is the original value `extra[p']`,
/// in order). An extra whose cone in the original graph has no parameter
/// (a mask built from iotas) is `computed` in the kernel from the element's
/// index; Stage::inputs are {Q base, K base, V base, the other extras...}.
/// A second score product S2 = Q2 . K2^T (`qk2`, with `has_qk2`) over the
/// same batch, rows and keys, read by the score alone (MLA's rotary part,
/// q_pe . k_pe^T), is computed in the kernel beside S: it is the extra of
/// param `s2_param` (never computed), and Q2 and K2 come after V in
/// Stage::inputs, before the other extras.
struct AttentionGroup {
  Contraction qk, pv;
  bool has_qk2 = false;
  Contraction qk2;
  int s2_param = -1;
  ir::Graph score_graph;
  ir::NodeId score = -1;
  int s_param = -1;
  std::vector<ir::NodeId> extra;
  std::vector<bool> computed;  // one per extra
  /// QK-norm (loop/attention_prologue.h): Q and K as `q_rows` and `k_rows`
  /// compute them in the kernel, row by row as they are read.
  Prologue q_rows, k_rows;
};

/// value(C) stored instead of C = the contraction `gemm`: `graph` is the
/// elementwise stage that read C, its node `value` the stage's one result,
/// param `c_param` is C (read only at the element being computed), param
/// p != c_param is the stage's input `extra[p']` in order. `roles[d]` says
/// which index of the product output axis d takes: 0 the batch, 1 m, 2 n,
/// -1 none (a unit axis, index 0); `inner[d]` the product of the extents
/// of the later axes of d's role, so that a role of several axes (one flat
/// axis of the contraction) gives axis d the index (i / inner[d]) %
/// extent[d]. Stage::inputs are {A base, B base, extra...}; Stage::results
/// {the value}.
///
/// Paired (loop/paired_epilogue.h): a second product over the same A,
/// gemm2 (only its b_base differs from gemm's), whose own elementwise stage
/// `graph2` (node `value2`, param `c2_param` the product, the other params
/// the inputs `extra2` in order) is param `g_param` of `graph`, read there
/// only at the element computed. Stage::inputs are then {A base, B base,
/// B2 base, extra..., extra2...}, and `extra` lacks that value.
struct EpilogueGroup {
  Contraction gemm;
  ir::Graph graph;
  ir::NodeId value = -1;
  int c_param = -1;
  std::vector<ir::NodeId> extra;
  std::vector<int> roles;
  std::vector<int64_t> inner;
  bool paired = false;
  Contraction gemm2;
  ir::Graph graph2;
  ir::NodeId value2 = -1;
  int c2_param = -1, g_param = -1;
  std::vector<ir::NodeId> extra2;
};

struct Stage {
  StageKind kind = StageKind::Naive;
  std::vector<ir::NodeId> nodes;    // the original nodes computed here, ascending
  std::vector<ir::NodeId> inputs;   // original values read (Row/Naive: bound to sub.params in order)
  std::vector<ir::NodeId> results;  // original values written (bound to sub.outputs in order)
  ir::Graph sub;                    // Row and Naive
  RowKernel row;                    // Row: plan_row_kernel(sub)
  Contraction contraction;          // Contraction: inputs = {a_base, b_base}, results = {the einsum}
  LayoutCopy copy;                  // Copy: inputs = {copy.base}, results = {the transpose}
  AttentionGroup attention;         // Attention
  EpilogueGroup epilogue;           // Epilogue
  Prologue a_rows, b_rows;   // Contraction and Epilogue: A, B computed as packed (or none)
};

struct Partition {
  std::vector<Stage> stages;
  /// True when stages.size() == 1 and it is a Row or Naive stage whose sub
  /// is the graph itself (same params and outputs).
  bool whole_graph = false;
};

Partition partition_graph(const ir::Graph& g);

/// A Row or Naive stage computing `nodes` (ascending) of `g` with `results`
/// among them: its inputs, sub and row plan, as partition_graph builds one.
Stage run_stage(const ir::Graph& g, std::vector<ir::NodeId> nodes, std::vector<ir::NodeId> results);

/// The params (indices) of out's cone in `sub`, ascending: what a function
/// of a stage's graph reads (a prologue's inputs).
std::vector<int> params_read(const ir::Graph& sub, ir::NodeId out);

/// The first float32 param of out's shape that out reads (the source read
/// in place of a value a prologue computes, loop/attention_prologue.h,
/// loop/gemm_prologue.h); -1 if none.
int source_param(const ir::Graph& sub, ir::NodeId out);

/// Row or Naive stage `s` of a partition of `g` rebuilt for its results
/// (after a fusion took one of them away): nodes no result needs dropped,
/// its inputs, sub and row plan computed again (Row or Naive decided
/// again), as partition_graph builds a stage.
void rebuild_run_stage(const ir::Graph& g, Stage* s);

/// The contraction an Einsum node is, reading its operands through foldable
/// views; false (with `why`) when it is not a matrix product axon's
/// contraction generator takes (non-f32, repeated labels, a label summed in
/// one operand only, more than one label in a role).
bool plan_contraction(const ir::Graph& g, ir::NodeId einsum, Contraction* out, std::string* why);

/// A product with one output row or column and no batch (A @ v, v @ B):
/// memory-bound, so the partition leaves it to the loops around it instead
/// of a contraction stage.
bool is_matrix_vector(const Contraction& c);

}  // namespace axon::loop
