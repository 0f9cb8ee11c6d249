// The SMT encoding of a graph: each node's element at a symbolic index, from
// the one definition of meaning (ir/element_def.h) instantiated with
// I = SymIndex and S = SymReal.
//
//   - A parameter X of rank r is an uninterpreted function Int^r -> Real; its
//     element at an index is the atom X[index].
//   - An elementwise or layout node reads its operands at operand_index(o)
//     and applies body(); a concat reads the operand whose range holds
//     o[axis], deciding the select from the index ranges where it can.
//   - A reduction or contraction is SUM (or MAX, MIN) over fresh binders of
//     body(operands at operand_index(o, r)). A binder whose extent is a sum
//     of sizes (an axis made by concatenation, K + R) is split into one binder
//     per tile:
//         SUM_{r < K+R} f(r) = SUM_{r < K} f(r) + SUM_{r < R} f(K + r)
//     and likewise MAX, combined with element_def.h's combine_step. The
//     tiles follow the boundaries at which the body's concat selects switch
//     operands (found by encoding the body once over the whole range), so
//     that every select is decided inside a tile; without selects they go in
//     name order. Literal ranges of at most four points are unrolled.
// Values are memoised per (node, index), so a DAG is encoded once per access.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "verify/smt/sym_real.h"

namespace axon::verify::smt {

/// One tile of a range: the points offset + [0, extent), or the single point
/// `offset` when `point` is set.
struct RangePiece {
  SymIndex offset;
  SymIndex extent;
  bool point = false;
};

/// True when [0, extent) splits into more than one tile (K + R, 2*N, N + 1).
bool is_composite(const SymIndex& extent);

/// The tiles [0, extent) splits into: one per size term, ordered so that
/// every boundary in `boundaries` falls between two tiles when some order
/// allows it (else name order), then the literal part.
std::vector<RangePiece> split_range(const SymIndex& extent, const std::vector<SymIndex>& boundaries = {});

/// The points B (affine in the sizes only) at which an undecided index
/// condition in `p` switches as `var` passes B, i.e. conditions var < B.
std::vector<SymIndex> select_boundaries(const PolyRef& p, const std::string& var);

class GraphEncoder {
 public:
  explicit GraphEncoder(const ir::Graph& g) : g_(g) {}
  /// The element of node `id` at `index` (one form per axis of the node).
  SymReal value(ir::NodeId id, const std::vector<SymIndex>& index);

 private:
  SymReal reduction(const ir::Node& n, const std::vector<SymIndex>& o);
  std::vector<std::vector<SymIndex>> reduction_boundaries(const ir::Node& n, const std::vector<SymIndex>& o,
                                                          const std::vector<SymIndex>& extents);
  SymReal concat(const ir::Node& n, const std::vector<SymIndex>& o, size_t k);

  const ir::Graph& g_;
  std::map<std::pair<ir::NodeId, std::string>, SymReal> memo_;
};

/// The symbolic shape of a node built at placeholder sizes.
std::vector<SymIndex> symbolic_shape(const ir::Shape& placeholder_shape);

/// The output index cases of a shape: one fresh variable per axis over its
/// range, one case per tile of each composite axis (tiles as split_range,
/// with `boundaries[a]` for axis a when given). With `interleaved`, an axis
/// of c times one size, c N, is instead one case read as c a + b with
/// a < N and b < c: the index a reshape merging [N, c] into it divides back
/// into its parts (c contiguous tiles of N would not).
std::vector<std::vector<SymIndex>> output_index_cases(const std::vector<SymIndex>& shape,
                                                      const std::vector<std::vector<SymIndex>>& boundaries = {},
                                                      bool interleaved = false);

}  // namespace axon::verify::smt
