// The one definition of meaning: each op written as element-level index
// notation,
//
//     out[o] = COMBINE_{r in R} body(operand_k[index_k(o, r)] ...)
//
// where o ranges over the output shape, r over the op's reduction domain R
// (empty for all but reductions and contractions) and COMBINE is a sum, max
// or min (or nothing when R is empty).
//
// The pieces are templates over the index type I and the scalar type S so
// that one text serves every consumer:
//   - the reference interpreter instantiates I = int64_t, S = ir::Real;
//   - the C++ code generator instantiates symbolic types that print code;
//   - the SMT encoding instantiates Z3 expressions.
// I needs I(int64_t), +, -, *, /, % (floor semantics on non-negative values).
// S needs the scalar primitives listed in ScalarOps below, found by ADL.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace axon::ir {

enum class Combine { None, Sum, Max, Min };

struct ReductionDomain {
  Combine combine = Combine::None;
  Shape extents;  // one per reduction variable
};

/// R and COMBINE of node `n`.
ReductionDomain reduction_domain(const Graph& g, const Node& n);

/// For Concat: the first output index along the axis that operand k covers.
std::vector<int64_t> concat_offsets(const Graph& g, const Node& n);

/// Whether two shapes list the same extents once their unit axes are
/// dropped (a reshape between them only inserts or removes unit axes).
inline bool same_non_unit_axes(const Shape& a, const Shape& b) {
  size_t i = 0, j = 0;
  for (;;) {
    while (i < a.size() && a[i] == 1) ++i;
    while (j < b.size() && b[j] == 1) ++j;
    if (i == a.size() || j == b.size()) return i == a.size() && j == b.size();
    if (a[i++] != b[j++]) return false;
  }
}

/// True when every index_k is an affine function of (o, r); only Reshape is not.
inline bool has_affine_access(const Node& n) { return n.op != Op::Reshape; }

/// index_k(o, r): the element of operand k that out[o] reads at reduction
/// point r. For Concat, operand k is read only where
/// offsets[k] <= o[axis] < offsets[k] + extent_k, and index_k shifts the axis.
template <class I>
std::vector<I> operand_index(const Graph& g, const Node& n, int k, const std::vector<I>& o,
                             const std::vector<I>& r) {
  const Type& in = g[n.args.at(k)].type;
  std::vector<I> idx;
  switch (n.op) {
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::ReduceMin: {
      // Kept axes come from o, reduced axes from r, in axis order.
      size_t oi = 0, ri = 0;
      for (int a = 0, j = 0; a < in.rank(); ++a) {
        bool reduced = j < static_cast<int>(n.attrs.ints.size()) && n.attrs.ints[j] == a;
        if (reduced) {
          idx.push_back(r[ri++]);
          ++j;
        } else {
          idx.push_back(o[oi++]);
        }
      }
      return idx;
    }
    case Op::Einsum: {
      EinsumSpec s;
      parse_einsum(n.attrs.text, &s);
      const std::string red = s.reduced();
      const std::string& labels = k == 0 ? s.a : s.b;
      for (char c : labels) {
        size_t p = s.out.find(c);
        idx.push_back(p != std::string::npos ? o[p] : r[red.find(c)]);
      }
      return idx;
    }
    case Op::Broadcast:
      for (int a = 0; a < in.rank(); ++a)
        idx.push_back(in.shape[a] == 1 && n.type.shape[a] != 1 ? I(int64_t{0}) : o[a]);
      return idx;
    case Op::Reshape: {
      // Row-major order is kept. A reshape that only inserts or drops unit
      // axes keeps every other axis in order: read it axis by axis (the
      // element the flat order gives, without products of sizes).
      if (same_non_unit_axes(in.shape, n.type.shape)) {
        size_t j = 0;
        for (int a = 0; a < in.rank(); ++a) {
          if (in.shape[a] == 1) {
            idx.push_back(I(int64_t{0}));
            continue;
          }
          while (n.type.shape[j] == 1) ++j;
          idx.push_back(o[j++]);
        }
        return idx;
      }
      // Otherwise flatten o, then unflatten into the input shape.
      std::vector<int64_t> os = row_major_strides(n.type.shape);
      std::vector<int64_t> is = row_major_strides(in.shape);
      I flat = I(int64_t{0});
      for (int a = 0; a < n.type.rank(); ++a) flat = flat + o[a] * I(os[a]);
      for (int a = 0; a < in.rank(); ++a) idx.push_back((flat / I(is[a])) % I(in.shape[a]));
      return idx;
    }
    case Op::Transpose:
      // Output axis a is input axis perm[a].
      idx.assign(in.rank(), I(int64_t{0}));
      for (int a = 0; a < in.rank(); ++a) idx[n.attrs.ints[a]] = o[a];
      return idx;
    case Op::Slice:
      for (int a = 0; a < in.rank(); ++a) idx.push_back(I(n.attrs.ints[a]) + o[a] * I(n.attrs.ints2[a]));
      return idx;
    case Op::Concat: {
      int axis = static_cast<int>(n.attrs.ints[0]);
      idx = o;
      idx[axis] = o[axis] - I(concat_offsets(g, n)[k]);
      return idx;
    }
    default:
      // Elementwise maps read every operand at the output index.
      return o;
  }
}

// ---- body: the scalar function of the operand values ----
//
// The scalar primitives each S provides (free functions, found by ADL):
//   S + S, S - S, S * S, S / S, -S
//   exp log sqrt tanh sin cos floor abs_of pow_of (S)
//   lt le gt ge eq ne (S, S) -> S   (truth as S)
//   logical_and logical_or logical_not, is_nan (S) -> S
//   where(S cond, S a, S b)
//   cast_to(DType to, S)   (rounds to `to`: floats to nearest even, ints toward
//                          zero, bool is x != 0)
//   make_scalar(double, const S& like) (a constant in S's domain)

/// out[o] for the body of `n` given the operand values `v` (for Iota: the
/// value of o[axis] converted to S, passed as v[0]; for Constant: v empty;
/// for Concat: v[0] is the selected operand's value).
template <class S>
S body(const Node& n, const std::vector<S>& v, const S& like) {
  switch (n.op) {
    case Op::Constant:
      return make_scalar(n.attrs.value, like);
    case Op::Iota:
    case Op::Param:
      return v.at(0);
    case Op::Neg: return -v[0];
    case Op::Abs: return abs_of(v[0]);
    case Op::Exp: return exp(v[0]);
    case Op::Log: return log(v[0]);
    case Op::Sqrt: return sqrt(v[0]);
    case Op::Tanh: return tanh(v[0]);
    case Op::Sin: return sin(v[0]);
    case Op::Cos: return cos(v[0]);
    case Op::Floor: return floor(v[0]);
    case Op::Not: return logical_not(v[0]);
    case Op::Cast: return cast_to(n.type.dtype, v[0]);
    case Op::Add: return v[0] + v[1];
    case Op::Sub: return v[0] - v[1];
    case Op::Mul: return v[0] * v[1];
    case Op::Div: return v[0] / v[1];
    case Op::Pow: return pow_of(v[0], v[1]);
    // numpy's maximum/minimum propagate NaN from either side.
    case Op::Maximum: return where(logical_or(is_nan(v[0]), gt(v[0], v[1])), v[0], v[1]);
    case Op::Minimum: return where(logical_or(is_nan(v[0]), lt(v[0], v[1])), v[0], v[1]);
    case Op::Lt: return lt(v[0], v[1]);
    case Op::Le: return le(v[0], v[1]);
    case Op::Gt: return gt(v[0], v[1]);
    case Op::Ge: return ge(v[0], v[1]);
    case Op::Eq: return eq(v[0], v[1]);
    case Op::Ne: return ne(v[0], v[1]);
    case Op::And: return logical_and(v[0], v[1]);
    case Op::Or: return logical_or(v[0], v[1]);
    case Op::Select: return where(v[0], v[1], v[2]);
    case Op::Einsum: return v[0] * v[1];
    default:  // reductions and layout ops pass their one operand value through
      return v.at(0);
  }
}

/// The start value of COMBINE and the fold step, over the same S.
template <class S>
S combine_identity(Combine c, const S& like) {
  switch (c) {
    case Combine::Max: return make_scalar(-__builtin_huge_val(), like);
    case Combine::Min: return make_scalar(__builtin_huge_val(), like);
    default: return make_scalar(0.0, like);
  }
}
template <class S>
S combine_step(Combine c, const S& acc, const S& x) {
  switch (c) {
    // A NaN term makes the max NaN, as numpy's np.max.
    case Combine::Max: return where(logical_or(is_nan(x), gt(x, acc)), x, acc);
    case Combine::Min: return where(logical_or(is_nan(x), lt(x, acc)), x, acc);
    default: return acc + x;
  }
}

}  // namespace axon::ir
