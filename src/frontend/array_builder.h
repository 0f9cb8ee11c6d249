// numpy's array semantics, expressed in axon's small graph IR.
//
// The IR's elementwise ops want operands of one shape and one dtype, its
// reductions drop axes, its one contraction is a two-operand einsum, and its
// constants are 0-d. ArrayBuilder is where numpy's conveniences are spelled
// out over that core: right-aligned broadcasting (reshape + broadcast),
// NEP 50 type promotion (casts; weak Python scalars become 0-d constants of
// the array's dtype), keepdims, negative axes, `@` batching, slicing, and so
// on. Every node it creates is noted at the SourceLoc it is given, and every
// case where numpy would raise becomes an axon::Diagnostic with numpy's
// complaint and the values involved. Operands passed as Values are arrays or
// Python scalars with at least one array among them (scalar-only arithmetic
// is folded by scalar_fold.h before it gets here).
//
// Implemented in: broadcast.cpp (leaves, casts, broadcasting, elementwise),
// reduce_ops.cpp (reductions), shape_ops.cpp (reshape, transpose, indexing,
// joining), contraction.cpp (matmul, dot, einsum).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "frontend/dtype_rules.h"
#include "frontend/value.h"
#include "ir/graph.h"

namespace axon::frontend {

using ir::DType;
using ir::NodeId;
using ir::Shape;

enum class NpBinary {
  Add, Sub, Mul, TrueDiv, FloorDiv, Mod, Maximum, Minimum,
  Lt, Le, Gt, Ge, Eq, Ne,
  BitAnd, BitOr, BitXor, LogicalAnd, LogicalOr, LogicalXor,
};

enum class NpUnary { Neg, Pos, Abs, Exp, Log, Sqrt, Tanh, Sin, Cos, Floor, Ceil, Square, Reciprocal, Invert, LogicalNot };

enum class NpReduce { Sum, Mean, Max, Min, Var, Std };

class ArrayBuilder {
 public:
  explicit ArrayBuilder(ir::Graph& g) : g_(g) {}
  ir::Graph& graph() { return g_; }
  // By value: adding nodes may move the graph's storage under a reference.
  ir::Type type(NodeId id) const { return g_[id].type; }
  std::string type_of(NodeId id) const { return ir::type_str(type(id)); }

  // ---- leaves, casts, broadcasting (broadcast.cpp)
  /// A 0-d constant. Constants mean the real number written (the IR's
  /// meaning is real arithmetic; rounding is the kernel's error budget), so a
  /// Python float adopting f32 keeps its full value; `cast` rounds it to `d`
  /// as an explicit dtype request (np.float32(0.1), dtype=...) does in numpy.
  /// Integer dtypes truncate and bool tests against zero either way.
  NodeId scalar(double value, DType d, const SourceLoc& at, bool cast = false);
  /// `value` everywhere in an array of shape `s`.
  NodeId fill(const Shape& s, double value, DType d, const SourceLoc& at, bool cast = false);
  NodeId iota(const Shape& s, int axis, DType d, const SourceLoc& at);
  NodeId cast(NodeId x, DType d, const SourceLoc& at);
  /// An array or a Python scalar as an array of dtype `d` (a Python int that
  /// does not fit an integer `d` is numpy's overflow error).
  NodeId to_tensor(const Value& v, DType d, const SourceLoc& at, bool cast = false);
  DTypeOperand dtype_operand(const Value& v) const;
  DType result_type(const std::vector<Value>& vs) const;
  /// numpy's broadcast of the operands' shapes; the error names every operand's type.
  Shape broadcast_shapes(const std::vector<Value>& vs, const SourceLoc& at);
  /// np.broadcast_to.
  NodeId broadcast_to(NodeId x, const Shape& s, const SourceLoc& at);

  // ---- elementwise (broadcast.cpp)
  /// `spelling` names the operation in messages ("+", "np.maximum").
  Value binary(NpBinary op, const Value& a, const Value& b, const SourceLoc& at, const std::string& spelling);
  Value unary(NpUnary op, const Value& a, const SourceLoc& at, const std::string& spelling);
  /// x ** exponent for an array x and a constant scalar exponent: small
  /// integer powers become multiplies, 0.5 a square root, others Pow.
  Value power(const Value& base, const Value& exponent, const SourceLoc& at);
  /// np.where(cond, a, b); a non-bool condition is tested against zero, as numpy does.
  Value where(const Value& cond, const Value& a, const Value& b, const SourceLoc& at);

  // ---- reductions (reduce_ops.cpp)
  /// An axis argument (None, an int or a tuple of ints) as sorted, unique,
  /// non-negative axes; `axis_at` is where the axis was written.
  std::vector<int64_t> normalize_axes(const Value& axis, int rank, const SourceLoc& axis_at);
  int64_t normalize_axis(int64_t axis, int rank, const SourceLoc& axis_at);
  NodeId reduce(NpReduce kind, NodeId x, const Value& axis, bool keepdims, std::optional<DType> dtype, double ddof,
                const SourceLoc& at, const SourceLoc& axis_at, const std::string& name);

  // ---- layout (shape_ops.cpp)
  /// `dims` may hold one -1, inferred as numpy does.
  NodeId reshape(NodeId x, const std::vector<int64_t>& dims, const SourceLoc& at);
  /// `axes` empty: reverse the axes (x.T). Otherwise a permutation, negative entries allowed.
  NodeId transpose(NodeId x, const std::vector<int64_t>& axes, const SourceLoc& at);
  NodeId swapaxes(NodeId x, int64_t a, int64_t b, const SourceLoc& at);
  NodeId moveaxis(NodeId x, const std::vector<int64_t>& src, const std::vector<int64_t>& dst, const SourceLoc& at);
  NodeId expand_dims(NodeId x, const std::vector<int64_t>& axes, const SourceLoc& at);
  /// `axes` null: drop every unit axis.
  NodeId squeeze(NodeId x, const std::vector<int64_t>* axes, const SourceLoc& at);
  /// Basic indexing: ints, slices, None and one Ellipsis (a Tuple for several).
  /// `item_locs` gives the location of each index item (or is empty).
  NodeId index(NodeId x, const Value& index, const SourceLoc& at, const std::vector<SourceLoc>& item_locs);
  NodeId concatenate(const std::vector<NodeId>& parts, const Value& axis, const SourceLoc& at);
  NodeId stack(const std::vector<NodeId>& parts, int64_t axis, const SourceLoc& at);
  /// np.split with a section count (`indices` empty) or split points.
  std::vector<NodeId> split(NodeId x, int64_t sections, const std::vector<int64_t>& indices, int64_t axis,
                            const SourceLoc& at);
  NodeId flip(NodeId x, const std::vector<int64_t>& axes, const SourceLoc& at);
  /// np.triu (upper) / np.tril over the last two axes, diagonal offset k.
  NodeId triangle(NodeId x, int64_t k, bool upper, const SourceLoc& at);
  /// A [rows, cols] i64 array holding col - row, the base of eye/tri/triu masks.
  NodeId diagonal_offsets(int64_t rows, int64_t cols, const SourceLoc& at);

  // ---- contractions (contraction.cpp)
  NodeId matmul(NodeId a, NodeId b, const SourceLoc& at);
  NodeId dot(NodeId a, NodeId b, const SourceLoc& at);
  /// np.einsum, n operands contracted left to right.
  NodeId einsum(const std::string& subscripts, const std::vector<NodeId>& operands, const SourceLoc& at);

 private:
  NodeId note(NodeId id, const SourceLoc& at);
  /// Reshapes to `rank` with leading unit axes, then broadcasts to `s`.
  NodeId expand_to(NodeId x, const Shape& s, const SourceLoc& at);
  NodeId ewise(ir::Op op, NodeId a, NodeId b, const SourceLoc& at);
  Value arithmetic(NpBinary op, const Value& a, const Value& b, const SourceLoc& at, const std::string& spelling);
  NodeId contract(const std::string& a_labels, NodeId a, const std::string& b_labels, NodeId b,
                  const std::string& out_labels, const SourceLoc& at);

  ir::Graph& g_;
};

/// "(3, 4)": a shape as numpy prints it.
std::string numpy_shape(const Shape& s);

}  // namespace axon::frontend
