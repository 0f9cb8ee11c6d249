// ArrayBuilder: axis handling and reductions (sum, mean, max, min, var, std).
#include <algorithm>
#include <cmath>

#include "frontend/array_builder.h"

namespace axon::frontend {

using ir::Op;

int64_t ArrayBuilder::normalize_axis(int64_t axis, int rank, const SourceLoc& axis_at) {
  if (axis < -rank || axis >= rank)
    fail_at(axis_at, "axis " + std::to_string(axis) + " is out of bounds for array of dimension " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> ArrayBuilder::normalize_axes(const Value& axis, int rank, const SourceLoc& axis_at) {
  std::vector<int64_t> axes;
  if (axis.kind == ValueKind::None) {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
    return axes;
  }
  auto bad = [&](const Value& v) {
    fail_at(axis_at, "axis must be an integer, a tuple of integers or None, got " + describe(v, g_));
  };
  if (axis.kind == ValueKind::Int) {
    axes.push_back(normalize_axis(axis.i, rank, axis_at));
  } else if (axis.is_sequence()) {
    for (const Value& item : axis.items) {
      if (item.kind != ValueKind::Int) bad(item);
      axes.push_back(normalize_axis(item.i, rank, axis_at));
    }
  } else {
    bad(axis);
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) fail_at(axis_at, "duplicate value in 'axis'");
  return axes;
}

NodeId ArrayBuilder::reduce(NpReduce kind, NodeId x, const Value& axis, bool keepdims, std::optional<DType> dtype,
                            double ddof, const SourceLoc& at, const SourceLoc& axis_at, const std::string& name) {
  const ir::Type in = type(x);
  std::vector<int64_t> axes = normalize_axes(axis, in.rank(), axis_at);
  int64_t count = 1;
  for (int64_t a : axes) count *= in.shape[a];
  DType dt = in.dtype;

  auto sum = [&](NodeId v) { return axes.empty() ? v : note(ir::reduce(g_, Op::ReduceSum, v, axes), at); };
  // The dtype numpy accumulates a mean or variance in, and the one it returns.
  auto mean_dtypes = [&](DType* compute, DType* result) {
    if (dtype) *compute = *result = *dtype;
    else if (!ir::is_float(dt)) *compute = *result = DType::F64;
    else if (dt == DType::F16 || dt == DType::BF16) *compute = DType::F32, *result = dt;
    else *compute = *result = dt;
  };
  auto divide = [&](NodeId v, double n) {
    return ewise(Op::Div, v, fill(type(v).shape, n, type(v).dtype, at), at);
  };

  NodeId r = x;
  switch (kind) {
    case NpReduce::Sum: {
      DType acc = dtype ? *dtype : (dt == DType::Bool || dt == DType::I32) ? DType::I64 : dt;
      r = sum(cast(x, acc, at));
      break;
    }
    case NpReduce::Mean: {
      DType compute, result;
      mean_dtypes(&compute, &result);
      r = sum(cast(x, compute, at));
      if (!axes.empty()) r = divide(r, static_cast<double>(count));
      r = cast(r, result, at);
      break;
    }
    case NpReduce::Max:
    case NpReduce::Min:
      if (dtype) fail_at(at, name + " does not take a dtype");
      if (count == 0)
        fail_at(at, std::string("zero-size array to reduction operation ") +
                        (kind == NpReduce::Max ? "maximum" : "minimum") + " which has no identity");
      if (!axes.empty()) r = note(ir::reduce(g_, kind == NpReduce::Max ? Op::ReduceMax : Op::ReduceMin, x, axes), at);
      break;
    case NpReduce::Var:
    case NpReduce::Std: {
      DType compute, result;
      mean_dtypes(&compute, &result);
      NodeId xc = cast(x, compute, at);
      NodeId mean = divide(sum(xc), static_cast<double>(count));
      Shape kept = in.shape;
      for (int64_t a : axes) kept[a] = 1;
      NodeId centered = ewise(Op::Sub, xc, note(ir::broadcast(g_, note(ir::reshape(g_, mean, kept), at), in.shape), at), at);
      r = divide(sum(ewise(Op::Mul, centered, centered, at)), std::max(static_cast<double>(count) - ddof, 0.0));
      if (kind == NpReduce::Std) r = note(ir::unary(g_, Op::Sqrt, r), at);
      r = cast(r, result, at);
      break;
    }
  }
  if (keepdims) {
    Shape kept = in.shape;
    for (int64_t a : axes) kept[a] = 1;
    r = note(ir::reshape(g_, r, kept), at);
  }
  return r;
}

}  // namespace axon::frontend
