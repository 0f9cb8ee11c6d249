// Error budgets: how far a float32 (or f16/bf16/f64) evaluation of a graph may
// land from the float64 reference, per output element, derived from the
// computation itself rather than from one fixed rtol.
//
// The rule (docs/error_budget.md explains it with examples): alongside every
// value v the budget carries a first-order forward error bound E(v), with
// u = the unit roundoff of the node's dtype (2^-24 for f32) and
// u_f = 4u for transcendental functions:
//   param, iota, bool values      E = 0 (inputs are exact in their dtype)
//   constant c                    E = |c - round(c)|
//   a +- b                        Ea + Eb + u|out|
//   a * b                         |b|Ea + |a|Eb + u|out|
//   a / b                         (Ea + |out|Eb) / |b| + u|out|
//   exp a                         |out|(exp(Ea) - 1) + u_f|out| (exp(a + Ea)
//                                 where out underflows to 0), and infinite
//                                 where |out| overflows the dtype
//   log a                         Ea/|a| + u_f|out|
//   sqrt a                        min(Ea/(2 sqrt a), sqrt Ea) + u|out|
//   tanh a                        Ea min(1, 1 - out^2 + Ea) + u_f|out|
//   sum over n terms t            sum Et + g(n) u sum|t|
//   einsum over n terms a*b       sum(|b|Ea + |a|Eb) + (1 + g(n)) u sum|a b|
//   with g(n) = min(n - 1, 8 sqrt(n)): the worst case of any summation order
//   for short sums, Higham and Mary's probabilistic bound for long ones (a
//   worst-case bound at n = 4096 is loose enough to hide a dropped term)
//   max/min, select, layout ops   the same op applied to the operands' E
// In every product of a magnitude and a bound, an infinite bound stays
// infinite where the magnitude is 0 (0 * inf would be NaN), and a zero
// bound contributes 0; einsum magnitudes are floored at the smallest
// subnormal double for the same reason. An infinite bound promises nothing.
// A kernel passes when |kernel - reference| <= 2 E + 2^-126 for every element
// (the factor 2 covers the second-order terms the rule drops), and
// non-finite references are matched exactly (same inf, NaN for NaN).
#pragma once

#include <vector>

#include "ir/graph.h"
#include "verify/interpreter.h"

namespace axon::verify {

/// The first-order error bound E for every output of `g` on `inputs`.
std::vector<ir::Tensor> error_bounds(const ir::Graph& g, const std::vector<ir::Tensor>& inputs);

/// The reference values (as interpret() returns them) and their bounds, from
/// one evaluation: the bound graph carries the values it needs anyway.
struct ReferenceWithBounds {
  std::vector<ir::Tensor> reference, bounds;
};
ReferenceWithBounds reference_with_bounds(const ir::Graph& g, const std::vector<ir::Tensor>& inputs);

/// The graph reference_with_bounds evaluates: params as g's with every
/// non-bool dtype made f64; outputs the bounds of g's outputs, then their
/// values carried in f64 (bools as bool). A compiled evaluation of it
/// (runtime/compiled_reference.h) splits its results with the next function.
ir::Graph reference_with_bounds_graph(const ir::Graph& g);

/// Splits the outputs of reference_with_bounds_graph(g) (`all`, as interpret
/// returns them) into references typed as g's outputs and their bounds.
ReferenceWithBounds split_reference_with_bounds(const ir::Graph& g, std::vector<ir::Tensor> all);

/// The graph that computes those bounds (its outputs are E per output of g);
/// exposed so that tests and `axon explain` can show it.
ir::Graph error_bound_graph(const ir::Graph& g);

struct Comparison {
  double max_error_over_budget = 0;  // max over elements of |got - ref| / budget
  double max_abs_error = 0;
  int64_t worst_index = -1;          // flat index of the worst element
  double worst_got = 0, worst_ref = 0, worst_budget = 0;
  int64_t mismatches = 0;            // elements over budget or non-finite mismatches
  int64_t unbounded = 0;             // elements whose budget is infinite: nothing is checked there
  bool ok() const { return mismatches == 0; }
};

/// Budget of one element from its bound E.
double element_budget(double bound);

/// Compares a kernel's output with the reference under the bounds.
Comparison compare_with_budget(const std::vector<double>& got, const ir::Tensor& ref, const ir::Tensor& bound);

}  // namespace axon::verify
