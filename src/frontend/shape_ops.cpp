// ArrayBuilder: layout operations — reshape, transposes, basic indexing,
// joining and splitting, flips and triangular masks.
#include <algorithm>

#include "frontend/array_builder.h"

namespace axon::frontend {

using ir::Op;

namespace {
std::string dims_str(const std::vector<int64_t>& d) { return numpy_shape(Shape(d.begin(), d.end())); }
}  // namespace

NodeId ArrayBuilder::reshape(NodeId x, const std::vector<int64_t>& dims, const SourceLoc& at) {
  int64_t numel = type(x).numel();
  int unknown = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (unknown >= 0) fail_at(at, "can only specify one unknown dimension");
      unknown = static_cast<int>(i);
    } else if (dims[i] < 0) {
      fail_at(at, "negative dimensions not allowed in reshape, got " + dims_str(dims));
    } else {
      known *= dims[i];
    }
  }
  Shape out(dims.begin(), dims.end());
  if (unknown >= 0) {
    if (known == 0 || numel % known != 0)
      fail_at(at, "cannot reshape array of size " + std::to_string(numel) + " into shape " + dims_str(dims));
    out[unknown] = numel / known;
  } else if (known != numel) {
    fail_at(at, "cannot reshape array of size " + std::to_string(numel) + " into shape " + dims_str(dims));
  }
  return note(ir::reshape(g_, x, out), at);
}

NodeId ArrayBuilder::transpose(NodeId x, const std::vector<int64_t>& axes, const SourceLoc& at) {
  int rank = type(x).rank();
  std::vector<int64_t> perm;
  if (axes.empty()) {
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  } else {
    if (static_cast<int>(axes.size()) != rank)
      fail_at(at, "axes don't match array: got " + std::to_string(axes.size()) + " axes for " + type_of(x));
    for (int64_t a : axes) perm.push_back(normalize_axis(a, rank, at));
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) fail_at(at, "repeated axis in transpose");
  }
  return note(ir::transpose(g_, x, perm), at);
}

NodeId ArrayBuilder::swapaxes(NodeId x, int64_t a, int64_t b, const SourceLoc& at) {
  int rank = type(x).rank();
  a = normalize_axis(a, rank, at);
  b = normalize_axis(b, rank, at);
  std::vector<int64_t> perm;
  for (int i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[a], perm[b]);
  return note(ir::transpose(g_, x, perm), at);
}

NodeId ArrayBuilder::moveaxis(NodeId x, const std::vector<int64_t>& src, const std::vector<int64_t>& dst,
                              const SourceLoc& at) {
  int rank = type(x).rank();
  if (src.size() != dst.size())
    fail_at(at, "`source` and `destination` arguments must have the same number of elements");
  std::vector<std::pair<int64_t, int64_t>> moves;
  std::vector<bool> moved(rank, false);
  for (size_t i = 0; i < src.size(); ++i) {
    int64_t s = normalize_axis(src[i], rank, at), d = normalize_axis(dst[i], rank, at);
    if (moved[s]) fail_at(at, "repeated axis in `source` argument");
    moved[s] = true;
    moves.emplace_back(d, s);
  }
  std::sort(moves.begin(), moves.end());
  for (size_t i = 1; i < moves.size(); ++i)
    if (moves[i].first == moves[i - 1].first) fail_at(at, "repeated axis in `destination` argument");
  std::vector<int64_t> order;
  for (int i = 0; i < rank; ++i)
    if (!moved[i]) order.push_back(i);
  for (auto [d, s] : moves) order.insert(order.begin() + d, s);
  return note(ir::transpose(g_, x, order), at);
}

NodeId ArrayBuilder::expand_dims(NodeId x, const std::vector<int64_t>& axes, const SourceLoc& at) {
  const Shape& in = type(x).shape;
  int out_rank = static_cast<int>(in.size() + axes.size());
  std::vector<bool> is_new(out_rank, false);
  for (int64_t a : axes) {
    int64_t n = normalize_axis(a, out_rank, at);
    if (is_new[n]) fail_at(at, "repeated axis");
    is_new[n] = true;
  }
  Shape out;
  size_t k = 0;
  for (int i = 0; i < out_rank; ++i) out.push_back(is_new[i] ? 1 : in[k++]);
  return note(ir::reshape(g_, x, out), at);
}

NodeId ArrayBuilder::squeeze(NodeId x, const std::vector<int64_t>* axes, const SourceLoc& at) {
  const Shape& in = type(x).shape;
  std::vector<bool> drop(in.size(), false);
  if (!axes) {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  } else {
    for (int64_t a : *axes) {
      int64_t n = normalize_axis(a, static_cast<int>(in.size()), at);
      if (in[n] != 1) fail_at(at, "cannot select an axis to squeeze out which has size not equal to one");
      drop[n] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  return note(ir::reshape(g_, x, out), at);
}

NodeId ArrayBuilder::index(NodeId x, const Value& idx, const SourceLoc& at, const std::vector<SourceLoc>& item_locs) {
  std::vector<Value> items = idx.kind == ValueKind::Tuple ? idx.items : std::vector<Value>{idx};
  auto loc_of = [&](size_t k) { return k < item_locs.size() ? item_locs[k] : at; };
  const Shape& in = type(x).shape;
  int rank = static_cast<int>(in.size());
  int consumed = 0;
  bool ellipsis = false;
  for (size_t k = 0; k < items.size(); ++k) {
    const Value& it = items[k];
    switch (it.kind) {
      case ValueKind::Int:
      case ValueKind::Slice: ++consumed; break;
      case ValueKind::None: break;
      case ValueKind::Ellipsis:
        if (ellipsis) fail_at(loc_of(k), "an index can only have a single ellipsis ('...')");
        ellipsis = true;
        break;
      case ValueKind::Tensor: case ValueKind::List: case ValueKind::Tuple: case ValueKind::Bool:
        fail_unsupported_at(loc_of(k), "indexing with " + describe(it, g_) +
                                           " (advanced indexing) is not supported; use slices, ints, None and ...");
      default:
        fail_at(loc_of(k), "only integers, slices (`:`), ellipsis (`...`) and None (`np.newaxis`) are valid indices, got " +
                               describe(it, g_));
    }
  }
  if (consumed > rank)
    fail_at(at, "too many indices for array: array is " + std::to_string(rank) + "-dimensional, but " +
                    std::to_string(consumed) + " were indexed");
  std::vector<int64_t> starts, steps;
  Shape sliced, out;
  int axis = 0;
  auto full_axis = [&]() {
    starts.push_back(0);
    steps.push_back(1);
    sliced.push_back(in[axis]);
    out.push_back(in[axis]);
    ++axis;
  };
  for (size_t k = 0; k < items.size(); ++k) {
    const Value& it = items[k];
    if (it.kind == ValueKind::None) {
      out.push_back(1);
    } else if (it.kind == ValueKind::Ellipsis) {
      for (int n = rank - consumed; n > 0; --n) full_axis();
    } else if (it.kind == ValueKind::Int) {
      int64_t n = in[axis], i = it.i;
      if (i < -n || i >= n)
        fail_at(loc_of(k), "index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(axis) +
                               " with size " + std::to_string(n));
      starts.push_back(i < 0 ? i + n : i);
      steps.push_back(1);
      sliced.push_back(1);
      ++axis;
    } else {
      int64_t n = in[axis];
      int64_t bounds[3] = {0, 0, 1};
      bool given[3] = {false, false, false};
      for (int p = 0; p < 3; ++p) {
        const Value& b = it.items[p];
        if (b.kind == ValueKind::None) continue;
        if (!b.is_integral()) fail_at(loc_of(k), "slice indices must be integers or None, got " + describe(b, g_));
        bounds[p] = b.i;
        given[p] = true;
      }
      int64_t step = bounds[2];
      if (step == 0) fail_at(loc_of(k), "slice step cannot be zero");
      auto adjust = [&](int p, int64_t dflt) {
        if (!given[p]) return dflt;
        int64_t v = bounds[p];
        if (v < 0) {
          v += n;
          if (v < 0) v = step < 0 ? -1 : 0;
        } else if (v >= n) {
          v = step < 0 ? n - 1 : n;
        }
        return v;
      };
      int64_t start = adjust(0, step < 0 ? n - 1 : 0);
      int64_t stop = adjust(1, step < 0 ? -1 : n);
      int64_t len = 0;
      if (step < 0 && stop < start) len = (start - stop - 1) / (-step) + 1;
      if (step > 0 && start < stop) len = (stop - start - 1) / step + 1;
      starts.push_back(len == 0 ? 0 : start);
      steps.push_back(step);
      sliced.push_back(len);
      out.push_back(len);
      ++axis;
    }
  }
  while (axis < rank) full_axis();
  NodeId r = note(ir::slice(g_, x, starts, steps, sliced), at);
  return note(ir::reshape(g_, r, out), at);
}

NodeId ArrayBuilder::concatenate(const std::vector<NodeId>& parts_in, const Value& axis_value, const SourceLoc& at) {
  if (parts_in.empty()) fail_at(at, "need at least one array to concatenate");
  std::vector<NodeId> parts = parts_in;
  int64_t axis = 0;
  if (axis_value.kind == ValueKind::None) {
    for (NodeId& p : parts) p = reshape(p, {-1}, at);
  } else if (axis_value.kind == ValueKind::Int) {
    axis = axis_value.i;
  } else {
    fail_at(at, "axis must be an integer or None, got " + describe(axis_value, g_));
  }
  DType dt = type(parts[0]).dtype;
  for (NodeId p : parts) dt = promote_types(dt, type(p).dtype);
  int rank = type(parts[0]).rank();
  if (rank == 0) fail_at(at, "zero-dimensional arrays cannot be concatenated");
  axis = normalize_axis(axis, rank, at);
  for (size_t k = 1; k < parts.size(); ++k) {
    const Shape& s = type(parts[k]).shape;
    if (static_cast<int>(s.size()) != rank)
      fail_at(at, "all the input arrays must have same number of dimensions, but the array at index 0 has " +
                      std::to_string(rank) + " dimension(s) and the array at index " + std::to_string(k) + " has " +
                      std::to_string(s.size()) + " dimension(s)");
    for (int i = 0; i < rank; ++i)
      if (i != axis && s[i] != type(parts[0]).shape[i])
        fail_at(at, "all the input array dimensions except for the concatenation axis must match exactly, but along "
                    "dimension " + std::to_string(i) + ", the array at index 0 has size " +
                        std::to_string(type(parts[0]).shape[i]) + " and the array at index " + std::to_string(k) +
                        " has size " + std::to_string(s[i]));
  }
  for (NodeId& p : parts) p = cast(p, dt, at);
  return note(ir::concat(g_, parts, static_cast<int>(axis)), at);
}

NodeId ArrayBuilder::stack(const std::vector<NodeId>& parts, int64_t axis, const SourceLoc& at) {
  if (parts.empty()) fail_at(at, "need at least one array to stack");
  for (NodeId p : parts)
    if (type(p).shape != type(parts[0]).shape) fail_at(at, "all input arrays must have the same shape");
  int64_t a = normalize_axis(axis, type(parts[0]).rank() + 1, at);
  std::vector<NodeId> expanded;
  for (NodeId p : parts) expanded.push_back(expand_dims(p, {a}, at));
  return concatenate(expanded, Value::integer(a), at);
}

std::vector<NodeId> ArrayBuilder::split(NodeId x, int64_t sections, const std::vector<int64_t>& indices, int64_t axis,
                                        const SourceLoc& at) {
  int rank = type(x).rank();
  if (rank == 0) fail_at(at, "cannot split a 0-d array");
  axis = normalize_axis(axis, rank, at);
  int64_t n = type(x).shape[axis];
  std::vector<int64_t> cuts = indices;
  if (indices.empty()) {
    if (sections <= 0) fail_at(at, "number sections must be larger than 0.");
    if (n % sections != 0) fail_at(at, "array split does not result in an equal division: " + std::to_string(n) +
                                           " elements into " + std::to_string(sections) + " sections");
    for (int64_t k = 1; k < sections; ++k) cuts.push_back(k * (n / sections));
  }
  std::vector<NodeId> out;
  Value none = Value::none();
  for (size_t k = 0; k <= cuts.size(); ++k) {
    Value sl;
    sl.kind = ValueKind::Slice;
    sl.items = {k == 0 ? none : Value::integer(cuts[k - 1]), k == cuts.size() ? none : Value::integer(cuts[k]), none};
    std::vector<Value> idx(static_cast<size_t>(axis), Value{});
    for (Value& v : idx) v.kind = ValueKind::Slice, v.items = {none, none, none};
    idx.push_back(sl);
    out.push_back(index(x, Value::tuple(idx), at, {}));
  }
  return out;
}

NodeId ArrayBuilder::flip(NodeId x, const std::vector<int64_t>& axes, const SourceLoc& at) {
  const Shape& in = type(x).shape;
  std::vector<int64_t> starts(in.size(), 0), steps(in.size(), 1);
  for (int64_t a : axes) {
    if (in[a] == 0) continue;
    starts[a] = in[a] - 1;
    steps[a] = -1;
  }
  return note(ir::slice(g_, x, starts, steps, in), at);
}

NodeId ArrayBuilder::diagonal_offsets(int64_t rows, int64_t cols, const SourceLoc& at) {
  Shape s{rows, cols};
  return ewise(Op::Sub, iota(s, 1, DType::I64, at), iota(s, 0, DType::I64, at), at);
}

NodeId ArrayBuilder::triangle(NodeId x, int64_t k, bool upper, const SourceLoc& at) {
  const Shape& s = type(x).shape;
  if (s.size() < 2)
    fail_unsupported_at(at, std::string(upper ? "np.triu" : "np.tril") + " of a " + std::to_string(s.size()) +
                                "-d array is not supported; pass an array with at least 2 dimensions");
  int64_t rows = s[s.size() - 2], cols = s[s.size() - 1];
  NodeId offsets = diagonal_offsets(rows, cols, at);
  NodeId kk = fill({rows, cols}, static_cast<double>(k), DType::I64, at);
  NodeId mask = ewise(upper ? Op::Ge : Op::Le, offsets, kk, at);
  DType dt = type(x).dtype;
  return note(ir::select(g_, expand_to(mask, s, at), x, fill(s, 0, dt, at)), at);
}

}  // namespace axon::frontend
