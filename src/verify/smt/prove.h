// Proving a rewrite: two graphs over the same parameters, equal for every
// size and every input?
//
// A RewriteCase states the rewrite once for all shapes: its sizes are named
// ("M", "K", "N") and `build` makes the two graphs for any assignment of
// those sizes. prove_equal builds them at placeholder sizes (proof_context.h),
// encodes each output element at a symbolic index of each side (encode.h),
// and asks Z3 whether the two normal forms are equal (to_z3.h).
//
// The verdict:
//   Proved   the solver showed lhs = rhs at every index, for all sizes >= 1
//            and all real inputs, using only the axioms in options.axioms;
//            the float64 interpreter agrees on small random shapes as a
//            sanity check (a disagreement turns the verdict into Unknown and
//            says so: it would be a bug in the encoding).
//   Refuted  the float64 interpreter found concrete sizes and inputs where
//            the two sides differ beyond rounding (or have different shapes);
//            the counterexample says which, with the values. The solver's
//            model, when it produced one, supplies the first sizes tried.
//   Unknown  neither: a timeout, a query outside the encoding (reported in
//            `reason`), or an identity that needs an axiom not granted.
// Unknown counts as not proved.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "verify/smt/proof_context.h"

namespace axon::verify::smt {

using DimSizes = std::map<std::string, int64_t>;

struct RewritePair {
  ir::Graph lhs, rhs;
};

struct RewriteCase {
  std::string name;
  std::vector<std::string> dims;
  /// Both sides at the given sizes; the same parameters (names, dtypes,
  /// shapes) in the same order, and as many outputs, pairwise compared.
  std::function<RewritePair(const DimSizes&)> build;
};

struct ProofOptions {
  unsigned timeout_ms = 2000;   // per solver query
  unsigned budget_ms = 20000;   // all queries of one proof together
  AxiomSet axioms;              // none unless asked for
  int numeric_trials = 4;       // size assignments tried by the interpreter
  uint64_t seed = 1;
};

enum class ProofStatus { Proved, Refuted, Unknown };
const char* proof_status_name(ProofStatus s);

struct ProofResult {
  ProofStatus status = ProofStatus::Unknown;
  double solver_ms = 0;
  int queries = 0;
  /// Why the symbolic proof did not go through, when it did not.
  std::string reason;
  /// For refutations: sizes, output index, both values, and the inputs
  /// when they are small; the solver's abstract model when it had one.
  std::string counterexample;
  /// One line per output case: the normal forms compared.
  std::string trace;
};

ProofResult prove_equal(const RewriteCase& c, const ProofOptions& options = {});

/// The first difference the float64 interpreter finds between the sides over
/// the given size assignments (and a few input distributions); empty when
/// they agree everywhere tried. Assignments where a side cannot be built are
/// skipped.
std::string find_numeric_counterexample(const RewriteCase& c, const std::vector<DimSizes>& trials, uint64_t seed);

}  // namespace axon::verify::smt
