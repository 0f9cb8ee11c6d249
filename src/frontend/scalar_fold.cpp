#include "frontend/scalar_fold.h"

#include <cmath>

namespace axon::frontend {

namespace {

[[noreturn]] void overflow(const SourceLoc& at, const std::string& what) {
  fail_unsupported_at(at, "integer overflow in " + what + ": axon folds Python ints in 64 bits");
}

int64_t checked(const SourceLoc& at, const std::string& op, int64_t a, int64_t b) {
  int64_t r = 0;
  bool bad = false;
  if (op == "+") bad = __builtin_add_overflow(a, b, &r);
  else if (op == "-") bad = __builtin_sub_overflow(a, b, &r);
  else if (op == "*") bad = __builtin_mul_overflow(a, b, &r);
  if (bad) overflow(at, std::to_string(a) + " " + op + " " + std::to_string(b));
  return r;
}

int64_t floor_div(int64_t a, int64_t b, const SourceLoc& at) {
  if (b == 0) fail_at(at, "integer division or modulo by zero");
  if (a == INT64_MIN && b == -1) overflow(at, "floor division");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// CPython's float divmod: the remainder takes the divisor's sign.
void float_divmod(double a, double b, double* div, double* mod) {
  double m = std::fmod(a, b);
  double d = (a - m) / b;
  if (m != 0) {
    if ((b < 0) != (m < 0)) {
      m += b;
      d -= 1.0;
    }
  } else {
    m = std::copysign(0.0, b);
  }
  double fd;
  if (d != 0) {
    fd = std::floor(d);
    if (d - fd > 0.5) fd += 1.0;
  } else {
    fd = std::copysign(0.0, a / b);
  }
  *div = fd;
  *mod = m;
}

Value int_power(int64_t base, int64_t exp, const SourceLoc& at) {
  int64_t result = 1;
  int64_t b = base;
  int64_t e = exp;
  while (e > 0) {
    if (e & 1)
      if (__builtin_mul_overflow(result, b, &result)) overflow(at, std::to_string(base) + " ** " + std::to_string(exp));
    e >>= 1;
    if (e > 0 && __builtin_mul_overflow(b, b, &b)) overflow(at, std::to_string(base) + " ** " + std::to_string(exp));
  }
  return Value::integer(result);
}

Value compare(const std::string& op, const Value& a, const Value& b) {
  long double x = a.kind == ValueKind::Float ? static_cast<long double>(a.f) : static_cast<long double>(a.i);
  long double y = b.kind == ValueKind::Float ? static_cast<long double>(b.f) : static_cast<long double>(b.i);
  bool r = op == "<" ? x < y : op == "<=" ? x <= y : op == ">" ? x > y : op == ">=" ? x >= y : op == "==" ? x == y : x != y;
  return Value::boolean(r);
}

}  // namespace

bool truthy(const Value& v) {
  switch (v.kind) {
    case ValueKind::None: return false;
    case ValueKind::Bool:
    case ValueKind::Int: return v.i != 0;
    case ValueKind::Float: return v.f != 0;
    case ValueKind::Str: return !v.s.empty();
    case ValueKind::Tuple:
    case ValueKind::List: return !v.items.empty();
    default: return true;
  }
}

Value fold_binary(const std::string& op, const Value& a, const Value& b, const SourceLoc& at) {
  AXON_CHECK(a.is_scalar() && b.is_scalar()) << "fold_binary on non-scalars";
  if (op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=") return compare(op, a, b);
  bool both_int = a.is_integral() && b.is_integral();
  if (op == "&" || op == "|" || op == "^" || op == "<<" || op == ">>") {
    if (!both_int)
      fail_at(at, "unsupported operand type(s) for " + op + ": python " + (a.is_integral() ? "int" : "float") +
                      " and python " + (b.is_integral() ? "int" : "float"));
    if (a.kind == ValueKind::Bool && b.kind == ValueKind::Bool && op != "<<" && op != ">>")
      return Value::boolean(op == "&" ? (a.i & b.i) : op == "|" ? (a.i | b.i) : (a.i ^ b.i));
    if (op == "&") return Value::integer(a.i & b.i);
    if (op == "|") return Value::integer(a.i | b.i);
    if (op == "^") return Value::integer(a.i ^ b.i);
    if (b.i < 0) fail_at(at, "negative shift count");
    if (op == ">>") return Value::integer(b.i >= 64 ? (a.i < 0 ? -1 : 0) : a.i >> b.i);
    if (b.i >= 63 || (a.i != 0 && (std::abs(a.i) > (INT64_MAX >> b.i)))) overflow(at, "<<");
    return Value::integer(a.i * (int64_t{1} << b.i));
  }
  if (both_int) {
    if (op == "+" || op == "-" || op == "*") return Value::integer(checked(at, op, a.i, b.i));
    if (op == "/") {
      if (b.i == 0) fail_at(at, "division by zero");
      return Value::real(static_cast<double>(a.i) / static_cast<double>(b.i));
    }
    if (op == "//") return Value::integer(floor_div(a.i, b.i, at));
    if (op == "%") {
      int64_t q = floor_div(a.i, b.i, at);
      return Value::integer(a.i - q * b.i);
    }
    if (op == "**") {
      if (b.i >= 0) return int_power(a.i, b.i, at);
      if (a.i == 0) fail_at(at, "0.0 cannot be raised to a negative power");
      return Value::real(std::pow(static_cast<double>(a.i), static_cast<double>(b.i)));
    }
  }
  double x = a.as_double(), y = b.as_double();
  if (op == "+") return Value::real(x + y);
  if (op == "-") return Value::real(x - y);
  if (op == "*") return Value::real(x * y);
  if (op == "/") {
    if (y == 0) fail_at(at, "float division by zero");
    return Value::real(x / y);
  }
  if (op == "//" || op == "%") {
    if (y == 0) fail_at(at, op == "//" ? "float floor division by zero" : "float modulo by zero");
    double d, m;
    float_divmod(x, y, &d, &m);
    return Value::real(op == "//" ? d : m);
  }
  if (op == "**") {
    if (x == 0 && y < 0) fail_at(at, "0.0 cannot be raised to a negative power");
    if (x < 0 && std::isfinite(y) && y != std::floor(y))
      fail_unsupported_at(at, "a negative number raised to a fractional power is complex");
    double r = std::pow(x, y);
    if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) fail_at(at, "numerical result out of range in **");
    return Value::real(r);
  }
  AXON_CHECK(false) << "unknown scalar operator " << op;
  return {};
}

Value fold_unary(const std::string& op, const Value& a, const SourceLoc& at) {
  AXON_CHECK(a.is_scalar()) << "fold_unary on a non-scalar";
  if (op == "+") return a.kind == ValueKind::Bool ? Value::integer(a.i) : a;
  if (op == "-") {
    if (a.kind == ValueKind::Float) return Value::real(-a.f);
    if (a.i == INT64_MIN) overflow(at, "negation");
    return Value::integer(-a.i);
  }
  if (a.kind == ValueKind::Float) fail_at(at, "bad operand type for unary ~: 'float'");
  return Value::integer(~a.i);
}

bool fold_numpy(const std::string& name, const std::vector<Value>& args, const SourceLoc& at, Value* out) {
  for (const Value& v : args)
    if (!v.is_scalar()) return false;
  auto real1 = [&](double (*f)(double)) {
    if (args.size() != 1) return false;
    *out = Value::real(f(args[0].as_double()));
    return true;
  };
  if (name == "exp") return real1([](double x) { return std::exp(x); });
  if (name == "log") return real1([](double x) { return std::log(x); });
  if (name == "log2") return real1([](double x) { return std::log2(x); });
  if (name == "log10") return real1([](double x) { return std::log10(x); });
  if (name == "log1p") return real1([](double x) { return std::log1p(x); });
  if (name == "expm1") return real1([](double x) { return std::expm1(x); });
  if (name == "sqrt") return real1([](double x) { return std::sqrt(x); });
  if (name == "tanh") return real1([](double x) { return std::tanh(x); });
  if (name == "sin") return real1([](double x) { return std::sin(x); });
  if (name == "cos") return real1([](double x) { return std::cos(x); });
  if (name == "tan") return real1([](double x) { return std::tan(x); });
  if (name == "arctan") return real1([](double x) { return std::atan(x); });
  if (name == "reciprocal" && args.size() == 1 && args[0].kind == ValueKind::Float) {
    *out = Value::real(1.0 / args[0].f);
    return true;
  }
  if (args.size() == 1 && (name == "floor" || name == "ceil" || name == "trunc" || name == "rint")) {
    if (args[0].is_integral()) {
      *out = args[0];
      return true;
    }
    double x = args[0].f;
    *out = Value::real(name == "floor" ? std::floor(x) : name == "ceil" ? std::ceil(x)
                       : name == "trunc" ? std::trunc(x) : std::nearbyint(x));
    return true;
  }
  if (args.size() == 1 && (name == "abs" || name == "absolute" || name == "fabs")) {
    const Value& a = args[0];
    if (a.kind == ValueKind::Float || name == "fabs") *out = Value::real(std::fabs(a.as_double()));
    else if (a.kind == ValueKind::Bool) *out = a;
    else if (a.i == INT64_MIN) overflow(at, "abs");
    else *out = Value::integer(std::abs(a.i));
    return true;
  }
  if (args.size() == 1 && name == "square") {
    *out = fold_binary("*", args[0], args[0], at);
    return true;
  }
  if (args.size() == 1 && name == "negative") {
    *out = fold_unary("-", args[0], at);
    return true;
  }
  if (args.size() == 2 && (name == "maximum" || name == "minimum" || name == "fmax" || name == "fmin")) {
    const Value& a = args[0];
    const Value& b = args[1];
    bool want_max = name == "maximum" || name == "fmax";
    if (a.is_integral() && b.is_integral()) {
      *out = Value::integer(want_max ? std::max(a.i, b.i) : std::min(a.i, b.i));
      return true;
    }
    double x = a.as_double(), y = b.as_double();
    if (std::isnan(x) || std::isnan(y)) {
      bool propagate = name == "maximum" || name == "minimum";
      *out = Value::real(propagate ? NAN : std::isnan(x) ? y : x);
    } else {
      *out = Value::real(want_max ? std::max(x, y) : std::min(x, y));
    }
    return true;
  }
  if (args.size() == 2 && name == "power") {
    if (args[0].is_integral() && args[1].is_integral() && args[1].i < 0)
      fail_at(at, "integers to negative integer powers are not allowed");
    *out = fold_binary("**", args[0], args[1], at);
    return true;
  }
  static const char* const kBinary[][2] = {{"add", "+"}, {"subtract", "-"}, {"multiply", "*"}, {"divide", "/"},
                                           {"true_divide", "/"}, {"floor_divide", "//"}, {"mod", "%"},
                                           {"remainder", "%"}};
  for (auto& [np_name, op] : kBinary)
    if (args.size() == 2 && name == np_name) {
      // numpy gives inf or nan for a zero divisor where Python raises.
      if ((name == "divide" || name == "true_divide") && args[1].as_double() == 0) {
        double x = args[0].as_double();
        *out = Value::real(x == 0 || std::isnan(x) ? NAN : std::copysign(INFINITY, x) * std::copysign(1.0, args[1].as_double()));
        return true;
      }
      *out = fold_binary(op, args[0], args[1], at);
      return true;
    }
  return false;
}

}  // namespace axon::frontend
