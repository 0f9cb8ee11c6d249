// bounded_check: one solver query that ends by its deadline whatever Z3 does.
//
// Z3's own time limit (the `timeout` parameter) and Z3_interrupt are soft:
// Z3 polls for them, and some of its nonlinear real arithmetic runs for
// minutes without polling (fuzz seed 11593, tests/property/fuzz_regressions).
// So the query runs in a helper process (support/child_server.h, one per
// process, forked at the first query) that is killed when `limit` has
// passed; the caller gets z3::unknown and the reason, and the next query
// forks a fresh helper. The query travels as SMT-LIB text and is
// checked by the helper's one solver, reset before each query; for sat the
// helper sends back the integer and rational constants of its model, which
// are rebuilt as a model in the solver's context (`model`, when given). A
// helper that crashes also answers unknown. The helper is never asked for a
// timeout of Z3's own, so it runs Z3 on its one thread.
//
// When the process cannot fork (no process slot left), the query runs in
// this process under Z3's `timeout` parameter: bounded only as far as Z3
// honours it, and `why` says so when it answers unknown.
#pragma once

#include <z3++.h>

#include <chrono>
#include <string>
#include <vector>

namespace axon::verify::smt {

/// Checks the conjunction of `assertions` (expressions of `c`) within
/// `limit` (wall clock): sat (the model in *model when given), unsat, or
/// unknown with the reason in *why (Z3's own reason, "killed at the
/// deadline of N ms", or how the helper ended).
z3::check_result bounded_check(z3::context& c, const std::vector<z3::expr>& assertions,
                               std::chrono::milliseconds limit, z3::model* model, std::string* why);

}  // namespace axon::verify::smt
