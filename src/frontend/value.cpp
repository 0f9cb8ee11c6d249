#include "frontend/value.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace axon::frontend {

std::string float_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  // sci reads "-d.ddde+XX": split into sign, digits and decimal exponent.
  bool negative = sci[0] == '-';
  size_t epos = sci.find('e');
  std::string mant = sci.substr(negative ? 1 : 0, epos - (negative ? 1 : 0));
  int exp10 = std::atoi(sci.c_str() + epos + 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  std::string out = negative ? "-" : "";
  if (exp10 >= -4 && exp10 < 16) {  // Python's repr switches to exponent form outside [1e-4, 1e16)
    if (exp10 < 0) return out + "0." + std::string(static_cast<size_t>(-exp10 - 1), '0') + digits;
    size_t int_len = static_cast<size_t>(exp10) + 1;
    if (digits.size() <= int_len) return out + digits + std::string(int_len - digits.size(), '0') + ".0";
    return out + digits.substr(0, int_len) + "." + digits.substr(int_len);
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  std::string e = std::to_string(std::abs(exp10));
  if (e.size() < 2) e = "0" + e;
  return out + "e" + (exp10 < 0 ? "-" : "+") + e;
}

std::string describe(const Value& v, const ir::Graph& g) {
  switch (v.kind) {
    case ValueKind::None: return "None";
    case ValueKind::Bool: return std::string("python bool ") + (v.i ? "True" : "False");
    case ValueKind::Int: return "python int " + std::to_string(v.i);
    case ValueKind::Float: return "python float " + float_repr(v.f);
    case ValueKind::Str: return "string '" + v.s + "'";
    case ValueKind::Tuple: return "tuple " + repr(v, g);
    case ValueKind::List: return "list " + repr(v, g);
    case ValueKind::Tensor: return ir::type_str(g[v.node].type) + " array";
    case ValueKind::DType: return std::string("dtype ") + ir::dtype_name(v.dtype);
    case ValueKind::Slice: return "slice";
    case ValueKind::Ellipsis: return "Ellipsis";
    case ValueKind::Module: return "module '" + v.s + "'";
    case ValueKind::Function: return "function";
    case ValueKind::Builtin: return "function '" + v.s + "'";
  }
  return "value";
}

std::string repr(const Value& v, const ir::Graph& g) {
  switch (v.kind) {
    case ValueKind::None: return "None";
    case ValueKind::Bool: return v.i ? "True" : "False";
    case ValueKind::Int: return std::to_string(v.i);
    case ValueKind::Float: return float_repr(v.f);
    case ValueKind::Str: return "'" + v.s + "'";
    case ValueKind::Tuple:
    case ValueKind::List: {
      bool tuple = v.kind == ValueKind::Tuple;
      std::string out = tuple ? "(" : "[";
      for (size_t k = 0; k < v.items.size(); ++k) out += (k ? ", " : "") + repr(v.items[k], g);
      if (tuple && v.items.size() == 1) out += ",";
      return out + (tuple ? ")" : "]");
    }
    default: return describe(v, g);
  }
}

}  // namespace axon::frontend
