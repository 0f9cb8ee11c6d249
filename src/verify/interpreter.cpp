#include "verify/interpreter.h"

#include <algorithm>

#include "ir/element_def.h"
#include "ir/real.h"

namespace axon::verify {

using namespace axon::ir;

namespace {

// The flat offset of operand k as base + sum_a oc[a]*o[a] + sum_b rc[b]*r[b],
// derived by probing operand_index at zero and at unit vectors. Valid for
// ops whose access is affine (has_affine_access).
struct AffineAccess {
  int64_t base = 0;
  std::vector<int64_t> oc, rc;
};

int64_t flatten(const std::vector<int64_t>& idx, const std::vector<int64_t>& strides) {
  int64_t f = 0;
  for (size_t i = 0; i < idx.size(); ++i) f += idx[i] * strides[i];
  return f;
}

AffineAccess affine_access(const Graph& g, const Node& n, int k, int out_rank, int red_rank) {
  std::vector<int64_t> st = row_major_strides(g[n.args[k]].type.shape);
  std::vector<int64_t> o(out_rank, 0), r(red_rank, 0);
  AffineAccess acc;
  acc.base = flatten(operand_index<int64_t>(g, n, k, o, r), st);
  for (int a = 0; a < out_rank; ++a) {
    o[a] = 1;
    acc.oc.push_back(flatten(operand_index<int64_t>(g, n, k, o, r), st) - acc.base);
    o[a] = 0;
  }
  for (int b = 0; b < red_rank; ++b) {
    r[b] = 1;
    acc.rc.push_back(flatten(operand_index<int64_t>(g, n, k, o, r), st) - acc.base);
    r[b] = 0;
  }
  return acc;
}

// Advances a row-major odometer; returns false after the last index.
bool advance(std::vector<int64_t>& idx, const Shape& ext) {
  for (int a = static_cast<int>(idx.size()) - 1; a >= 0; --a) {
    if (++idx[a] < ext[a]) return true;
    idx[a] = 0;
  }
  return false;
}

class Evaluator {
 public:
  Evaluator(const Graph& g, const std::vector<Tensor>& inputs) : g_(g), inputs_(inputs) {}

  Tensor eval(NodeId id, const std::vector<const Tensor*>& args) {
    const Node& n = g_[id];
    Tensor out{n.type, std::vector<double>(static_cast<size_t>(n.type.numel()))};
    if (out.data.empty()) return out;
    switch (n.op) {
      case Op::Param: {
        const Tensor& in = inputs_.at(n.attrs.ints[0]);
        AXON_CHECK(in.type.shape == n.type.shape) << "input " << n.attrs.ints[0] << " has shape "
                                                  << shape_str(in.type.shape) << ", expected "
                                                  << shape_str(n.type.shape);
        out.data = in.data;
        return out;
      }
      case Op::Iota: {
        std::vector<int64_t> o(n.type.rank(), 0);
        int axis = static_cast<int>(n.attrs.ints[0]);
        size_t f = 0;
        do out.data[f++] = body<Real>(n, {Real{static_cast<double>(o[axis])}}, Real{}).v;
        while (advance(o, n.type.shape));
        return out;
      }
      case Op::Einsum:
        if (n.type.rank() >= 1) return eval_einsum_rows(n, args, std::move(out));
        break;
      default:
        break;
    }
    if (has_affine_access(n) && n.op != Op::Concat) return eval_affine(n, args, std::move(out));
    return eval_general(n, args, std::move(out));
  }

 private:
  // The definition, walked literally: every index through operand_index.
  Tensor eval_general(const Node& n, const std::vector<const Tensor*>& args, Tensor out) {
    ReductionDomain dom = reduction_domain(g_, n);
    AXON_CHECK(dom.extents.empty()) << op_name(n.op) << " has no general reduction path";
    std::vector<std::vector<int64_t>> strides;
    for (const Tensor* a : args) strides.push_back(row_major_strides(a->type.shape));
    std::vector<int64_t> offsets, extents;
    int axis = -1;
    if (n.op == Op::Concat) {
      offsets = concat_offsets(g_, n);
      axis = static_cast<int>(n.attrs.ints[0]);
      for (const Tensor* a : args) extents.push_back(a->type.shape[axis]);
    }
    std::vector<int64_t> o(n.type.rank(), 0);
    const std::vector<int64_t> no_r;
    std::vector<Real> v(args.size());
    size_t f = 0;
    do {
      if (n.op == Op::Concat) {
        int k = static_cast<int>(std::upper_bound(offsets.begin(), offsets.end(), o[axis]) - offsets.begin()) - 1;
        std::vector<int64_t> idx = operand_index<int64_t>(g_, n, k, o, no_r);
        out.data[f++] = args[k]->data[flatten(idx, strides[k])];
        continue;
      }
      for (size_t k = 0; k < args.size(); ++k)
        v[k] = Real{args[k]->data[flatten(operand_index<int64_t>(g_, n, static_cast<int>(k), o, no_r), strides[k])]};
      out.data[f++] = body<Real>(n, v, Real{}).v;
    } while (advance(o, n.type.shape));
    return out;
  }

  // Affine operands: running offsets instead of index vectors. The output
  // odometer carries one flat offset per operand, updated as it advances.
  Tensor eval_affine(const Node& n, const std::vector<const Tensor*>& args, Tensor out) {
    ReductionDomain dom = reduction_domain(g_, n);
    const int orank = n.type.rank(), rrank = static_cast<int>(dom.extents.size());
    const size_t nargs = args.size();
    std::vector<AffineAccess> acc;
    for (size_t k = 0; k < nargs; ++k) acc.push_back(affine_access(g_, n, static_cast<int>(k), orank, rrank));
    int64_t red_count = 1;
    for (int64_t e : dom.extents) red_count *= e;
    std::vector<Real> v(nargs);
    const int64_t total = n.type.numel();

    // Elementwise over operands of the output's own layout: offsets are f.
    std::vector<int64_t> ostrides = row_major_strides(n.type.shape);
    bool same_layout = rrank == 0;
    for (size_t k = 0; k < nargs && same_layout; ++k) same_layout = acc[k].base == 0 && acc[k].oc == ostrides;
    if (same_layout) {
      for (int64_t f = 0; f < total; ++f) {
        for (size_t k = 0; k < nargs; ++k) v[k] = Real{args[k]->data[f]};
        out.data[f] = body<Real>(n, v, Real{}).v;
      }
      return out;
    }

    std::vector<int64_t> o(orank, 0), r(rrank, 0), off(nargs), roff(nargs);
    for (size_t k = 0; k < nargs; ++k) off[k] = acc[k].base;
    const bool plain_sum = n.op == Op::ReduceSum && rrank == 1;
    for (int64_t f = 0; f < total; ++f) {
      if (rrank == 0) {
        for (size_t k = 0; k < nargs; ++k) v[k] = Real{args[k]->data[off[k]]};
        out.data[f] = body<Real>(n, v, Real{}).v;
      } else if (plain_sum) {  // the common row sum, without the generic fold
        double sum = 0;
        const double* p = args[0]->data.data() + off[0];
        const int64_t step = acc[0].rc[0];
        for (int64_t i = 0; i < dom.extents[0]; ++i) sum += p[i * step];
        out.data[f] = sum;
      } else {
        Real a = combine_identity<Real>(dom.combine, Real{});
        std::fill(r.begin(), r.end(), 0);
        roff = off;
        for (int64_t i = 0; i < red_count; ++i) {
          for (size_t k = 0; k < nargs; ++k) v[k] = Real{args[k]->data[roff[k]]};
          a = combine_step(dom.combine, a, body<Real>(n, v, Real{}));
          step_odometer(r, dom.extents, acc, roff, /*reduction=*/true);
        }
        out.data[f] = a.v;
      }
      step_odometer(o, n.type.shape, acc, off, /*reduction=*/false);
    }
    return out;
  }

  // Advances `idx` over `ext` in row-major order and moves each operand's
  // flat offset along (by its output or reduction coefficients).
  static void step_odometer(std::vector<int64_t>& idx, const Shape& ext, const std::vector<AffineAccess>& acc,
                            std::vector<int64_t>& off, bool reduction) {
    for (int a = static_cast<int>(idx.size()) - 1; a >= 0; --a) {
      const bool wrap = ++idx[a] == ext[a];
      for (size_t k = 0; k < acc.size(); ++k) {
        int64_t c = reduction ? acc[k].rc[a] : acc[k].oc[a];
        off[k] += wrap ? -c * (ext[a] - 1) : c;
      }
      if (!wrap) return;
      idx[a] = 0;
    }
  }

  // Einsum with the last output axis innermost: for each leading output
  // index and each reduction point (in order), add a*b into a whole output
  // row. Each element still sums its terms in reduction order.
  Tensor eval_einsum_rows(const Node& n, const std::vector<const Tensor*>& args, Tensor out) {
    ReductionDomain dom = reduction_domain(g_, n);
    int orank = n.type.rank(), rrank = static_cast<int>(dom.extents.size());
    AffineAccess A = affine_access(g_, n, 0, orank, rrank);
    AffineAccess B = affine_access(g_, n, 1, orank, rrank);
    int64_t red_count = 1;
    for (int64_t e : dom.extents) red_count *= e;
    const int64_t width = n.type.shape[orank - 1];
    const int64_t sa = A.oc[orank - 1], sb = B.oc[orank - 1];
    Shape lead(n.type.shape.begin(), n.type.shape.end() - 1);
    std::vector<int64_t> o(orank - 1, 0), r(rrank, 0);
    const double* a = args[0]->data.data();
    const double* b = args[1]->data.data();
    double* row = out.data.data();
    do {
      int64_t oa = A.base, ob = B.base;
      for (int i = 0; i < orank - 1; ++i) {
        oa += A.oc[i] * o[i];
        ob += B.oc[i] * o[i];
      }
      std::fill(r.begin(), r.end(), 0);
      for (int64_t t = 0; t < red_count; ++t) {
        int64_t pa = oa, pb = ob;
        for (int i = 0; i < rrank; ++i) {
          pa += A.rc[i] * r[i];
          pb += B.rc[i] * r[i];
        }
        if (sa == 0 && sb == 1) {  // the matmul case: a scalar times a row of b
          const double av = a[pa];
          const double* br = b + pb;
          for (int64_t j = 0; j < width; ++j) row[j] += av * br[j];
        } else {
          for (int64_t j = 0; j < width; ++j) row[j] += a[pa + j * sa] * b[pb + j * sb];
        }
        advance(r, dom.extents);
      }
      row += width;
    } while (orank > 1 && advance(o, lead));
    return out;
  }

  const Graph& g_;
  const std::vector<Tensor>& inputs_;
};

std::vector<Tensor> run(const Graph& g, const std::vector<Tensor>& inputs, bool keep_all) {
  AXON_CHECK(inputs.size() == g.params.size()) << "expected " << g.params.size() << " inputs, got " << inputs.size();
  // Free each value after its last use unless it is an output.
  std::vector<int> last_use(g.size(), -1);
  for (int i = 0; i < g.size(); ++i)
    for (NodeId a : g[i].args) last_use[a] = i;
  for (NodeId o : g.outputs) last_use[o] = g.size();
  std::vector<Tensor> values(g.size());
  Evaluator ev(g, inputs);
  for (int i = 0; i < g.size(); ++i) {
    std::vector<const Tensor*> args;
    for (NodeId a : g[i].args) args.push_back(&values[a]);
    values[i] = ev.eval(i, args);
    if (!keep_all)
      for (NodeId a : g[i].args)
        if (last_use[a] == i) values[a] = Tensor{};
  }
  if (keep_all) return values;
  std::vector<Tensor> outs;
  for (NodeId o : g.outputs) outs.push_back(values[o]);
  return outs;
}

}  // namespace

std::vector<Tensor> interpret(const Graph& g, const std::vector<Tensor>& inputs) { return run(g, inputs, false); }
std::vector<Tensor> interpret_all(const Graph& g, const std::vector<Tensor>& inputs) { return run(g, inputs, true); }

}  // namespace axon::verify
