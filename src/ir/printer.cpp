#include "ir/printer.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace axon::ir {

namespace {
std::string ints_str(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << "]";
  return os.str();
}

}  // namespace

std::string double_str(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

namespace {

std::string attrs_str(const Graph& g, const Node& n) {
  switch (n.op) {
    case Op::Param: return " {index = " + std::to_string(n.attrs.ints[0]) + ", name = \"" +
                           g.params[n.attrs.ints[0]].name + "\"}";
    case Op::Constant: return " {value = " + double_str(n.attrs.value) + "}";
    case Op::Iota:
    case Op::Concat: return " {axis = " + std::to_string(n.attrs.ints[0]) + "}";
    case Op::ReduceSum:
    case Op::ReduceMax:
    case Op::ReduceMin: return " {axes = " + ints_str(n.attrs.ints) + "}";
    case Op::Einsum: return " {spec = \"" + n.attrs.text + "\"}";
    case Op::Transpose: return " {perm = " + ints_str(n.attrs.ints) + "}";
    case Op::Slice: return " {starts = " + ints_str(n.attrs.ints) + ", steps = " + ints_str(n.attrs.ints2) + "}";
    default: return "";
  }
}
}  // namespace

std::string print_node(const Graph& g, NodeId id) {
  const Node& n = g[id];
  std::ostringstream os;
  os << "%" << id << ": " << type_str(n.type) << " = " << op_name(n.op) << "(";
  for (size_t i = 0; i < n.args.size(); ++i) os << (i ? ", " : "") << "%" << n.args[i];
  os << ")" << attrs_str(g, n);
  return os.str();
}

std::string print(const Graph& g) {
  std::ostringstream os;
  os << "func " << g.entry << "(";
  for (size_t i = 0; i < g.params.size(); ++i)
    os << (i ? ", " : "") << g.params[i].name << ": " << type_str(g.params[i].type);
  os << ") -> (";
  for (size_t i = 0; i < g.outputs.size(); ++i) os << (i ? ", " : "") << type_str(g[g.outputs[i]].type);
  os << ") {\n";
  for (int i = 0; i < g.size(); ++i) os << "  " << print_node(g, i) << "\n";
  os << "  return ";
  for (size_t i = 0; i < g.outputs.size(); ++i) os << (i ? ", " : "") << "%" << g.outputs[i];
  os << "\n}\n";
  return os.str();
}

}  // namespace axon::ir
