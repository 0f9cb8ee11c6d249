// Algebraic rewrites found by operator propagation and proved by Z3.
//
// discover(g) walks the graph and, at each node, tries to move an operator
// past its neighbours:
//   factor-out-of-contraction  a factor of a contraction operand that is
//                              constant along the contracted axes (a row
//                              scale, a softmax denominator) is applied to the
//                              result instead: (x*s)@W = s*(x@W)
//   factor-across-contraction  a factor of the first operand that varies only
//                              along contracted axes the second carries (a
//                              gain along k) multiplies the second instead:
//                              (x*g)@W = x@(g*W) (one way only: no cycles)
//   sum-of-contractions        P@Q + R@S as one contraction over the
//                              concatenated operands [P R] @ [Q; S]
//   shared-operand-merge       X@W1 and X@W2 as one X@[W1 W2], sliced
//   reassociate                (A@B)@C <-> A@(B@C)
//   transpose-into-contraction einsum(transpose(A), B) as one einsum
//   online-softmax             softmax(x)@V as two tiles of the key axis
//                              combined with running maxima (exp axioms)
//   fold-constants             the scalar constants of a product of mul
//                              and div as one, when no step rounds:
//                              (0.5 x)(2 / t) = x / t
//   unary-past-contraction     u(x)@W -> u(x@W): right for neg, wrong for
//                              exp; the prover refuses the wrong ones
//   sum-into-contraction       a sum over an output label of an einsum that
//                              one operand alone carries is taken in that
//                              operand first: sum_n (A@B) = A @ sum_n B
//   reassociate-chain          a tree of einsums re-bracketed in the order
//                              of fewest FLOPs, at any rank: (A@B)@v ->
//                              A@(B@v) (contraction.h)
// Each candidate is built as a whole graph and handed to the prover
// (verify/smt/prove.h) as a rewrite over symbolic sizes: every distinct size
// of the parameters becomes a symbol (or is derived from one, size_symbols.h),
// the graph is rebuilt at any assignment of the symbols (resize) and the move
// is replayed on it. Only Proved
// candidates may be used; refused ones keep their counterexample.
//
// Library rules (rules/library.json, enumerate.h) are moves too, of kind
// "library-rule", proved on the graph at hand before use.
//
// explore(g) applies proved moves repeatedly (a graph of variants keyed by
// structural hash) within node/iteration/time budgets, and returns the k
// cheapest variants by the cost model below with the moves that led there.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "verify/smt/prove.h"

namespace axon::rewrite {

/// FLOPs and bytes moved of a graph: an einsum costs 2 * the product of all
/// its label sizes; an elementwise op loop::op_weight flops per element (a
/// transcendental counts the length of its vector routine), a reduction one
/// per input element read; bytes are 4 * (elements read + written) of every computing node
/// (broadcast, reshape, constants and parameters are views and cost nothing
/// themselves; their consumers read the broadcast size).
struct Cost {
  double flops = 0;
  double bytes = 0;
};
Cost cost(const ir::Graph& g);
/// A single figure to rank variants: flops + 4 * bytes (a machine that
/// moves a byte for the price of about four flops).
double cost_score(const Cost& c);

/// The graph with every dimension whose value is in `sizes` replaced by the
/// mapped value (node types, and what depends on them). Throws
/// axon::InternalError when a node cannot be rebuilt at the new sizes.
ir::Graph resize(const ir::Graph& g, const std::map<int64_t, int64_t>& sizes);

/// One move at one site, replayable on any resized copy of the graph
/// (node ids are preserved by resize).
struct Move {
  std::string kind;    // "factor-out-of-contraction", ...
  std::string detail;  // human-readable: which nodes, which factor
  std::vector<ir::NodeId> site;
  int variant = 0;     // which of several candidates at the same site
  /// online-softmax: the split axis's size in the graph it was found on, and
  /// the first tile's length (0: min(32, size / 2)).
  int64_t split_size = 0, tile = 0;
  /// library-rule: the rule's two sides (rules/library.json's notation).
  std::string rule_lhs, rule_rhs;
  /// reassociate-chain: the bracketing of the chain's leaves, as the split
  /// point of each run in pre-order (run [i, j] is split after leaf k).
  std::vector<int> order;
};

/// Applies `m` to `g`; nullopt when it does not apply there.
std::optional<ir::Graph> apply_move(const ir::Graph& g, const Move& m);
/// Every move that applies somewhere in `g`.
std::vector<Move> candidate_moves(const ir::Graph& g);

/// A rule of the library, offered in the simplifying direction only.
struct LibraryRule {
  std::string name, lhs, rhs;
};
/// The rules of rules/library.json whose rhs has fewer ops than the lhs and
/// no variable the lhs lacks; empty when the file cannot be read.
std::vector<LibraryRule> load_library(const std::string& path);
/// rules/library.json under the working directory, else in the repository
/// above the running executable's build folder; empty when neither exists.
std::string default_library_path();
/// Every application of one of `rules` in `g` (kind "library-rule").
std::vector<Move> library_moves(const ir::Graph& g, const std::vector<LibraryRule>& rules);
std::optional<ir::Graph> apply_library_rule(const ir::Graph& g, const Move& m);

struct Candidate {
  Move move;
  ir::Graph after;
  verify::smt::ProofResult proof;
  Cost before, after_cost;
};

struct DiscoverOptions {
  unsigned timeout_ms = 2000;  // per solver query
  unsigned budget_ms = 8000;   // per candidate
  int numeric_trials = 3;
  verify::smt::AxiomSet axioms;  // none: propagation moves need no axiom
};

/// The proof of `m` on `g` over symbolic sizes (each distinct parameter
/// size > 1 is a symbol, a size a reshape splits is derived from its parts:
/// size_symbols.h).
verify::smt::ProofResult prove_move(const ir::Graph& g, const Move& m, const DiscoverOptions& o = {});

/// Every candidate move on `g`, each proved or refused.
std::vector<Candidate> discover(const ir::Graph& g, const DiscoverOptions& o = {});

struct ExploreOptions {
  int max_variants = 64;     // graphs kept
  int max_iterations = 4;    // rounds of applying moves to every variant
  double max_seconds = 30;   // wall clock, proofs included
  int k = 3;                 // variants returned
  DiscoverOptions prove;
  /// Library rules tried besides the propagation moves (load_library).
  std::vector<LibraryRule> library;
};

struct AppliedRewrite {
  Move move;
  verify::smt::ProofResult proof;
};

struct RewrittenGraph {
  ir::Graph graph;
  std::vector<AppliedRewrite> steps;  // from the original, in order
  Cost cost;
};

enum class StopReason { Saturated, VariantBudget, IterationBudget, TimeBudget };
const char* stop_reason_name(StopReason r);

struct ExploreResult {
  std::vector<RewrittenGraph> best;  // cheapest first; best[0] may be the original
  /// Every candidate tried, on the original or on a variant, proved or not
  /// (`after` is left empty to save memory).
  std::vector<Candidate> tried;
  StopReason stop = StopReason::Saturated;
  int variants = 0, iterations = 0, proofs = 0;
};

ExploreResult explore(const ir::Graph& g, const ExploreOptions& o = {});

}  // namespace axon::rewrite
