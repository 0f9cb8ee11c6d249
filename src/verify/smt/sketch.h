// Sketch: builds one side of a rewrite in numpy's terms (broadcasting, @,
// axis reductions with keepdims), on top of the IR's typed builders, so that
// a rewrite reads like the numpy it came from:
//
//     Sketch s({{"X", {M, K}}, {"W", {K, N}}});
//     s.output(s.matmul(s.exp(s.in("X")), s.in("W")));
//
// All values are f32; constants are 0-d and broadcast like numpy scalars.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "verify/smt/prove.h"

namespace axon::verify::smt {

class Sketch {
 public:
  using Id = ir::NodeId;
  explicit Sketch(const std::vector<std::pair<std::string, ir::Shape>>& params);

  Id in(const std::string& name);
  Id scalar(double v);
  const ir::Shape& shape(Id a) const { return g_[a].type.shape; }

  // Elementwise, with numpy broadcasting.
  Id add(Id a, Id b);
  Id sub(Id a, Id b);
  Id mul(Id a, Id b);
  Id div(Id a, Id b);
  Id maximum(Id a, Id b);
  Id neg(Id a);
  Id exp(Id a);
  Id log(Id a);
  Id sqrt(Id a);
  Id tanh(Id a);
  Id abs(Id a);
  Id rsqrt(Id a) { return div(scalar(1), sqrt(a)); }
  Id silu(Id a) { return div(a, add(scalar(1), exp(neg(a)))); }
  Id relu(Id a) { return maximum(a, scalar(0)); }

  // Contractions and reductions.
  Id matmul(Id a, Id b);  // 2-D @ 2-D
  Id einsum(const std::string& spec, Id a, Id b);
  Id sum(Id a, int axis, bool keepdims = false);
  Id max(Id a, int axis, bool keepdims = false);
  Id mean(Id a, int axis, bool keepdims = false);
  Id softmax(Id a, int axis);  // the stable form: exp(a - max) / sum

  // Layout.
  Id transpose(Id a, const std::vector<int64_t>& perm);
  Id t(Id a) { return transpose(a, {1, 0}); }
  Id concat(const std::vector<Id>& parts, int axis);
  /// a[..., start:start+len, ...] along `axis`.
  Id slice(Id a, int axis, int64_t start, int64_t len);
  Id broadcast_to(Id a, const ir::Shape& shape);
  Id reshape(Id a, const ir::Shape& shape);

  void output(Id a) { g_.outputs.push_back(a); }
  const ir::Graph& graph() const { return g_; }

 private:
  Id binary(ir::Op op, Id a, Id b);
  int axis_of(Id a, int axis) const;
  ir::Graph g_;
};

/// A RewriteCase from the sizes, the parameters (shapes as functions of the
/// sizes) and one function per side.
using SideFn = std::function<void(Sketch&, const DimSizes&)>;
using ParamsFn = std::function<std::vector<std::pair<std::string, ir::Shape>>(const DimSizes&)>;
RewriteCase rewrite_case(std::string name, std::vector<std::string> dims, ParamsFn params, SideFn lhs, SideFn rhs);

}  // namespace axon::verify::smt
