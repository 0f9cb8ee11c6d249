#include "ir/verify.h"

#include <algorithm>
#include <set>

namespace axon::ir {

namespace {
const Type& arg_type(const Graph& g, const Node& n, int i) { return g[n.args.at(i)].type; }
}  // namespace

void verify_node(const Graph& g, const Node& n) {
  const char* name = op_name(n.op);
  int arity = op_arity(n.op);
  if (arity >= 0)
    AXON_CHECK(static_cast<int>(n.args.size()) == arity)
        << name << " takes " << arity << " operands, got " << n.args.size();
  for (int64_t d : n.type.shape) AXON_CHECK(d >= 0) << name << ": negative dim in " << type_str(n.type);

  switch (n.op) {
    case Op::Param:
      AXON_CHECK(n.attrs.ints.size() == 1 && n.attrs.ints[0] >= 0 &&
                 n.attrs.ints[0] < static_cast<int64_t>(g.params.size()))
          << "param index";
      AXON_CHECK(g.params[n.attrs.ints[0]].type == n.type) << "param type";
      return;
    case Op::Constant:
      AXON_CHECK(n.type.rank() == 0) << "constants are 0-d";
      return;
    case Op::Iota:
      AXON_CHECK(n.attrs.ints.size() == 1 && n.attrs.ints[0] >= 0 && n.attrs.ints[0] < n.type.rank())
          << "iota axis";
      return;
    case Op::Cast:
      AXON_CHECK(arg_type(g, n, 0).shape == n.type.shape) << "cast keeps the shape";
      return;
    case Op::Select: {
      AXON_CHECK(arg_type(g, n, 0).dtype == DType::Bool) << "select condition must be bool";
      for (int i = 0; i < 3; ++i)
        AXON_CHECK(arg_type(g, n, i).shape == n.type.shape) << "select operands share one shape";
      AXON_CHECK(arg_type(g, n, 1) == n.type && arg_type(g, n, 2) == n.type) << "select branches share a type";
      return;
    }
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::ReduceMin: {
      const Type& in = arg_type(g, n, 0);
      const auto& axes = n.attrs.ints;
      AXON_CHECK(std::is_sorted(axes.begin(), axes.end()) &&
                 std::adjacent_find(axes.begin(), axes.end()) == axes.end())
          << "reduction axes sorted and unique";
      for (int64_t a : axes) AXON_CHECK(a >= 0 && a < in.rank()) << "reduction axis " << a;
      AXON_CHECK(n.type.rank() == in.rank() - static_cast<int>(axes.size())) << "reduction rank";
      AXON_CHECK(n.type.dtype == in.dtype) << "reduction dtype";
      return;
    }
    case Op::Einsum: {
      EinsumSpec s;
      AXON_CHECK(parse_einsum(n.attrs.text, &s)) << "einsum spec '" << n.attrs.text << "'";
      const Type& a = arg_type(g, n, 0);
      const Type& b = arg_type(g, n, 1);
      AXON_CHECK(static_cast<int>(s.a.size()) == a.rank() && static_cast<int>(s.b.size()) == b.rank())
          << "einsum labels vs ranks: " << n.attrs.text << " on " << type_str(a) << ", " << type_str(b);
      AXON_CHECK(a.dtype == b.dtype && a.dtype == n.type.dtype) << "einsum dtypes";
      // Each label has one extent wherever it appears.
      for (size_t i = 0; i < s.a.size(); ++i) {
        for (size_t j = 0; j < s.b.size(); ++j)
          if (s.a[i] == s.b[j]) AXON_CHECK(a.shape[i] == b.shape[j]) << "einsum label " << s.a[i] << " extent";
        for (size_t j = 0; j < s.a.size(); ++j)
          if (s.a[i] == s.a[j]) AXON_CHECK(a.shape[i] == a.shape[j]) << "einsum diagonal extent";
      }
      for (size_t i = 0; i < s.b.size(); ++i)
        for (size_t j = 0; j < s.b.size(); ++j)
          if (s.b[i] == s.b[j]) AXON_CHECK(b.shape[i] == b.shape[j]) << "einsum diagonal extent";
      AXON_CHECK(static_cast<int>(s.out.size()) == n.type.rank()) << "einsum output rank";
      return;
    }
    case Op::Broadcast: {
      const Type& in = arg_type(g, n, 0);
      AXON_CHECK(in.rank() == n.type.rank() && in.dtype == n.type.dtype)
          << "broadcast keeps rank and dtype: " << type_str(in) << " -> " << type_str(n.type);
      for (int i = 0; i < in.rank(); ++i)
        AXON_CHECK(in.shape[i] == n.type.shape[i] || in.shape[i] == 1)
            << "broadcast " << type_str(in) << " -> " << type_str(n.type);
      return;
    }
    case Op::Reshape:
      AXON_CHECK(arg_type(g, n, 0).numel() == n.type.numel() && arg_type(g, n, 0).dtype == n.type.dtype)
          << "reshape " << type_str(arg_type(g, n, 0)) << " -> " << type_str(n.type);
      return;
    case Op::Transpose: {
      const Type& in = arg_type(g, n, 0);
      std::vector<int64_t> p = n.attrs.ints;
      AXON_CHECK(static_cast<int>(p.size()) == in.rank()) << "transpose perm rank";
      std::sort(p.begin(), p.end());
      for (int i = 0; i < in.rank(); ++i) AXON_CHECK(p[i] == i) << "transpose perm is a permutation";
      for (int i = 0; i < in.rank(); ++i) AXON_CHECK(n.type.shape[i] == in.shape[n.attrs.ints[i]]) << "transpose shape";
      return;
    }
    case Op::Slice: {
      const Type& in = arg_type(g, n, 0);
      AXON_CHECK(static_cast<int>(n.attrs.ints.size()) == in.rank() &&
                 static_cast<int>(n.attrs.ints2.size()) == in.rank() && n.type.rank() == in.rank())
          << "slice attrs";
      for (int i = 0; i < in.rank(); ++i) {
        int64_t start = n.attrs.ints[i], step = n.attrs.ints2[i], len = n.type.shape[i];
        AXON_CHECK(step != 0) << "slice step";
        if (len == 0) continue;
        int64_t last = start + (len - 1) * step;
        AXON_CHECK(start >= 0 && start < in.shape[i] && last >= 0 && last < in.shape[i])
            << "slice axis " << i << " reads outside " << type_str(in);
      }
      return;
    }
    case Op::Concat: {
      AXON_CHECK(n.args.size() >= 1 && n.attrs.ints.size() == 1) << "concat attrs";
      int axis = static_cast<int>(n.attrs.ints[0]);
      AXON_CHECK(axis >= 0 && axis < n.type.rank()) << "concat axis";
      int64_t total = 0;
      for (size_t k = 0; k < n.args.size(); ++k) {
        const Type& t = arg_type(g, n, static_cast<int>(k));
        AXON_CHECK(t.rank() == n.type.rank() && t.dtype == n.type.dtype) << "concat operand type";
        for (int i = 0; i < t.rank(); ++i)
          if (i != axis) AXON_CHECK(t.shape[i] == n.type.shape[i]) << "concat operand shape";
        total += t.shape[axis];
      }
      AXON_CHECK(total == n.type.shape[axis]) << "concat extent";
      return;
    }
    default:
      break;
  }
  AXON_CHECK(is_elementwise(n.op)) << "unhandled op " << name;
  for (size_t i = 0; i < n.args.size(); ++i) {
    const Type& t = arg_type(g, n, static_cast<int>(i));
    AXON_CHECK(t.shape == n.type.shape) << name << ": operand " << i << " is " << type_str(t)
                                        << ", result " << type_str(n.type);
    AXON_CHECK(t.dtype == arg_type(g, n, 0).dtype) << name << ": operands differ in dtype";
  }
  // Integer division and transcendental functions of integers are not in the
  // op set (ops.def): the frontend converts to a float dtype first.
  if (n.op == Op::Div || has_property(n.op, Transcendental) || n.op == Op::Floor)
    AXON_CHECK(is_float(n.type.dtype)) << name << " needs a float dtype, got " << type_str(n.type);
  if (has_property(n.op, Comparison) || has_property(n.op, Logical)) {
    AXON_CHECK(n.type.dtype == DType::Bool) << name << " returns bool";
    if (has_property(n.op, Logical)) AXON_CHECK(arg_type(g, n, 0).dtype == DType::Bool) << name << " takes bool";
  } else {
    AXON_CHECK(n.type.dtype == arg_type(g, n, 0).dtype) << name << ": result dtype";
  }
}

void verify(const Graph& g) {
  for (int i = 0; i < g.size(); ++i) {
    for (NodeId a : g[i].args) AXON_CHECK(a >= 0 && a < i) << "%" << i << " uses %" << a << " out of order";
    verify_node(g, g[i]);
  }
  for (NodeId o : g.outputs) AXON_CHECK(o >= 0 && o < g.size()) << "output %" << o;
}

}  // namespace axon::ir
