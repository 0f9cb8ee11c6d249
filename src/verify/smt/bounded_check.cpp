// bounded_check: a solver query in a helper process killed at its
// deadline; contract in bounded_check.h.
#include "verify/smt/bounded_check.h"

#include <mutex>
#include <sstream>

#include "support/child_server.h"

namespace axon::verify::smt {

namespace {

// The helper's answer to one query (SMT-LIB text): "unsat", "unknown
// <reason>", or "sat" followed by one line per numeral constant of the
// model, "<int|real> <value> <name>".
std::string answer(const std::string& query) {
  static z3::context c;
  static z3::solver s(c);
  s.reset();
  s.from_string(query.c_str());
  z3::check_result r = s.check();
  if (r == z3::unsat) return "unsat";
  if (r == z3::unknown) return "unknown " + s.reason_unknown();
  std::string out = "sat";
  z3::model m = s.get_model();
  for (unsigned i = 0; i < m.num_consts(); ++i) {
    z3::func_decl d = m.get_const_decl(i);
    z3::expr v = m.get_const_interp(d);
    if (!v.is_numeral() || !(v.is_int() || v.is_real())) continue;
    out += std::string("\n") + (v.is_int() ? "int " : "real ") + Z3_get_numeral_string(c, v) + " " + d.name().str();
  }
  return out;
}

// The model that `text` (answer()'s lines after "sat") describes, in `c`.
z3::model rebuild_model(z3::context& c, std::istringstream& text) {
  z3::model m(c);
  std::string kind, value, name;
  while (text >> kind >> value && std::getline(text >> std::ws, name)) {
    z3::expr k = kind == "int" ? c.int_const(name.c_str()) : c.real_const(name.c_str());
    z3::expr v = kind == "int" ? c.int_val(value.c_str()) : c.real_val(value.c_str());
    z3::func_decl d = k.decl();
    m.add_const_interp(d, v);
  }
  return m;
}

// The assertions as one SMT-LIB benchmark.
std::string smt_text(z3::context& c, const std::vector<z3::expr>& assertions) {
  std::vector<Z3_ast> all(assertions.begin(), assertions.end());
  Z3_ast last = all.empty() ? static_cast<Z3_ast>(c.bool_val(true)) : all.back();
  if (!all.empty()) all.pop_back();
  return Z3_benchmark_to_smtlib_string(c, "", "", "unknown", "", static_cast<unsigned>(all.size()), all.data(), last);
}

z3::check_result in_this_process(z3::context& c, const std::vector<z3::expr>& assertions,
                                 std::chrono::milliseconds limit, z3::model* model, std::string* why) {
  z3::solver s(c);
  z3::params p(c);
  p.set("timeout", static_cast<unsigned>(limit.count()));
  s.set(p);
  for (const z3::expr& a : assertions) s.add(a);
  z3::check_result r = s.check();
  if (r == z3::sat && model) *model = s.get_model();
  if (r == z3::unknown) *why = s.reason_unknown();
  return r;
}

}  // namespace

z3::check_result bounded_check(z3::context& c, const std::vector<z3::expr>& assertions,
                               std::chrono::milliseconds limit, z3::model* model, std::string* why) {
  static std::mutex mu;
  static support::ChildServer helper(answer);
  const std::string query = smt_text(c, assertions);
  support::HelperReply h;
  {
    std::lock_guard<std::mutex> lock(mu);
    h = helper.ask(query, limit);
  }
  if (h.how.rfind("could not fork", 0) == 0) {
    z3::check_result r = in_this_process(c, assertions, limit, model, why);
    if (r == z3::unknown) *why += " (in this process: " + h.how + ")";
    return r;
  }
  if (h.timed_out) {
    *why = "killed at the deadline of " + std::to_string(limit.count()) + " ms";
    return z3::unknown;
  }
  if (!h.ok) {
    *why = "the solver's process " + (h.how == "threw" ? "failed: " + h.value : "ended with " + h.how);
    return z3::unknown;
  }
  std::istringstream text(h.value);
  std::string head;
  text >> head;
  if (head == "unsat") return z3::unsat;
  if (head == "sat") {
    if (model) *model = rebuild_model(c, text);
    return z3::sat;
  }
  std::getline(text >> std::ws, *why);
  return z3::unknown;
}

}  // namespace axon::verify::smt
