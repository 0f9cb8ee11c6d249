// The float64 reference and error bounds of a graph (verify::reference_with_
// bounds), computed either by the interpreter or by a compiled kernel of the
// float64 twin (verify/float64_twin.h) of the same graph the interpreter
// evaluates (verify::reference_with_bounds_graph), printed by
// codegen::print_reference_cpp and built by compile_shared (cached by
// content, so a graph compiles once per machine).
//
// The switch (compiled_reference_preferred): a graph whose interpreter
// evaluation is estimated past kCompiledReferenceSeconds uses the compiled
// twin; smaller graphs keep the interpreter (no compile to pay). Graphs
// dominated by einsums take the twin too: its matrix products are float64
// register tiles (tile/passes/matmul_nests.h; docs/gate.md, "Latency of
// the references", has the measurements). $AXON_REFERENCE = "interpreter" or
// "compiled" forces one path. If the compiled path fails (compiler, load),
// a warning goes to stderr and the interpreter computes every reference.
// The interpreter stays the definition: the compiled twin agrees with it
// up to the order of long sums (docs/error_budget.md, "The compiled
// reference"), which tests/unit/compiled_reference_test.cpp checks.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "runtime/loaded_kernel.h"
#include "verify/error_budget.h"

namespace axon::runtime {

/// Estimated seconds past which the compiled twin replaces the interpreter.
inline constexpr double kCompiledReferenceSeconds = 1.0;

/// The seconds one interpreter evaluation of reference_with_bounds(g) is
/// estimated to take, from analysis::graph_cost: about 0.5 ns per
/// contraction FLOP and 100 ns per element of any other op (the estimate
/// optimize.cpp uses for its re-check).
double interpreter_seconds_estimate(const ir::Graph& g);

/// Whether the compiled twin computes g's references (the switch above).
bool compiled_reference_preferred(const ir::Graph& g);

/// A compiled evaluation of one graph (any graph the printer takes).
class CompiledGraph {
 public:
  /// Prints, compiles (-O2 -march=native -fno-tree-vectorize -fopenmp -ffp-contract=off,
  /// no fast-math) and
  /// loads `g`; `threads` <= 0: the machine's cores. Throws
  /// axon::InternalError when any step fails.
  explicit CompiledGraph(const ir::Graph& g, int threads = 0);
  /// One tensor per output (values as doubles), as verify::interpret returns.
  /// Thread-safe.
  std::vector<ir::Tensor> run(const std::vector<ir::Tensor>& inputs) const;
  double compile_seconds() const { return compile_seconds_; }

 private:
  ir::Graph g_;
  std::unique_ptr<LoadedKernel> kernel_;
  double compile_seconds_ = 0;
};

class ReferenceEvaluator {
 public:
  enum class Path { Interpreter, Compiled };
  /// Chooses the path (above); compiles nothing yet. `threads`: the
  /// compiled twin's threads per evaluation (<= 0: the machine's cores);
  /// a caller that evaluates several input sets at once gives each fewer.
  explicit ReferenceEvaluator(const ir::Graph& g, int threads = 0);
  ReferenceEvaluator(const ir::Graph& g, Path p, int threads = 0);
  /// reference_with_bounds(g, inputs); the first call on the compiled path
  /// compiles. Thread-safe.
  verify::ReferenceWithBounds evaluate(const std::vector<ir::Tensor>& inputs) const;
  /// The chosen path (Interpreter after a failed compile).
  Path path() const;
  /// Why the compiled path failed; empty if it has not.
  std::string failure() const;

 private:
  void prepare() const;
  const ir::Graph& g_;
  int threads_ = 0;
  mutable std::once_flag once_;
  mutable std::mutex mu_;
  mutable Path path_;
  mutable std::string failure_;
  mutable std::unique_ptr<CompiledGraph> compiled_;
};

/// "interpreter", "compiled" or "auto" from $AXON_REFERENCE (unset: "auto").
std::string reference_path_setting();

}  // namespace axon::runtime
