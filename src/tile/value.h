// Value: the scalar expressions of the tile IR, evaluated once per point of
// the loops around them.
//
///   Load(buffer, index...)  an element of a buffer (one index per dimension)
///   Apply(op, args...)      the graph op `op` applied to the arguments; its
///                           meaning is ir::body (ir/element_def.h), so a
///                           value never restates what an op computes
///   IndexOf(index)          an integer index as an i64 value (iota)
///
/// The op of an Apply is an ir::Node with its args cleared: its kind, attrs
/// and result type are all ir::body reads. A Constant is an Apply with no
/// arguments.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "tile/index.h"

namespace axon::tile {

enum class ValueKind { Load, Apply, IndexOf };

class Value {
 public:
  Value() = default;
  static Value load(int buffer, std::vector<Index> idx, ir::DType dtype);
  static Value apply(const ir::Node& op, std::vector<Value> args);
  static Value constant(double v, ir::DType dtype);
  static Value index_of(const Index& i);

  bool defined() const { return n_ != nullptr; }
  ValueKind kind() const;
  ir::DType dtype() const;
  int buffer() const;                      // Load
  const std::vector<Index>& idx() const;   // Load
  const ir::Node& op() const;              // Apply
  const std::vector<Value>& args() const;  // Apply
  const Index& index() const;              // IndexOf

  /// Index variables replaced (in every Load index and IndexOf).
  Value substitute(const std::function<std::optional<Index>(const std::string&)>& f) const;
  /// Every index (of each Load and IndexOf) replaced by f(index).
  Value map_indices(const std::function<Index(const Index&)>& f) const;
  /// Every Load rewritten by `f` when it returns a value.
  Value replace_loads(const std::function<std::optional<Value>(const Value& load)>& f) const;
  /// Calls `f` on every Load, outermost first.
  void visit_loads(const std::function<void(const Value& load)>& f) const;
  /// True when an index variable `v` occurs.
  bool uses(const std::string& v) const;
  /// True when a Load of buffer `b` occurs.
  bool uses_buffer(int b) const;
  /// The number of Apply nodes that are transcendental or divisions (a cost proxy).
  int expensive_ops() const;
  /// Text such as "exp(X[i0, i1] - t3[i0])"; `buffer_name` names buffers.
  std::string str(const std::function<std::string(int)>& buffer_name) const;

 private:
  struct Node;
  explicit Value(std::shared_ptr<const Node> n) : n_(std::move(n)) {}
  std::shared_ptr<const Node> n_;
};

/// Evaluates `v` with the scalar type S of element_def.h: `load(v)` returns
/// the element a Load reads, `index(i)` turns an index into an i64 S, and
/// `like(dtype)` is any S of that dtype (element_def.h's `like`).
template <class S, class LikeFn, class LoadFn, class IndexFn>
S evaluate(const Value& v, LikeFn&& like, LoadFn&& load, IndexFn&& index);

}  // namespace axon::tile

#include "tile/value_eval.h"
