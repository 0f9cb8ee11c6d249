// Discovery by operator propagation on the workloads: each must-find rewrite
// is found, proved over symbolic sizes, and the rewritten graph evaluates to
// the original's values on random inputs (at small sizes, to 1e-9 relative).
// Also: a wrong propagation is refused with a counterexample, explore()
// honours its budgets and names why it stopped, and `axon explain --json`
// has the documented shape.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "frontend/spec.h"
#include "ir/printer.h"
#include "loop/row_kernel.h"
#include "rewrite/rewrite.h"
#include "rewrite/size_symbols.h"
#include "transforms/pipeline.h"
#include "verify/smt/proof_context.h"
#include "verify/smt/sym_index.h"
#include "verify/inputs.h"
#include "verify/interpreter.h"

using namespace axon;
using rewrite::Candidate;

namespace {

ir::Graph workload(const std::string& name) {
  auto spec = frontend::load_spec(std::string(AXON_SOURCE_DIR) + "/bench/workloads/" + name + ".py", {});
  return transforms::run_pipeline(std::move(spec.graph));
}

ir::Graph from_source(const std::string& source) {
  auto spec = frontend::parse_spec("inline.py", source, {});
  return transforms::run_pipeline(std::move(spec.graph));
}

// Small sizes standing for the parameters' sizes: a distinct small value
// for each symbol of the proof (size_symbols), so that a size a reshape
// derives from its parts (m7's 32 = 4 * n8) stays that product.
std::map<int64_t, int64_t> small_sizes(const ir::Graph& g) {
  static const int64_t primes[] = {3, 5, 7, 11, 13, 4, 6, 9};
  rewrite::SizeSymbols sym = rewrite::size_symbols(g, 0);
  verify::smt::DimSizes d;
  int i = 0;
  for (const std::string& n : sym.dims) d[n] = primes[i++ % 8];
  return sym.at(d);
}

// The original and the moved graph agree on random inputs at small sizes.
void expect_same_values(const ir::Graph& g, const rewrite::Move& m) {
  ir::Graph small = rewrite::resize(g, small_sizes(g));
  std::optional<ir::Graph> after = rewrite::apply_move(small, m);
  ASSERT_TRUE(after) << m.kind << " does not replay at small sizes";
  for (uint64_t seed : {1, 2}) {
    auto in = verify::random_inputs(small, seed);
    auto a = verify::interpret(small, in), b = verify::interpret(*after, in);
    ASSERT_EQ(a.size(), b.size());
    for (size_t o = 0; o < a.size(); ++o) {
      ASSERT_EQ(a[o].type, b[o].type);
      for (size_t i = 0; i < a[o].data.size(); ++i)
        ASSERT_NEAR(a[o].data[i], b[o].data[i], 1e-9 * (1 + std::abs(a[o].data[i]))) << m.kind << " output " << o << "[" << i << "]";
    }
  }
}

// The proved candidate of this kind whose detail contains `needle`.
Candidate must_find(const ir::Graph& g, const std::string& kind, const std::string& needle = "") {
  std::string seen;
  for (Candidate& c : rewrite::discover(g)) {
    seen += "  " + c.move.kind + " [" + verify::smt::proof_status_name(c.proof.status) + "] " + c.move.detail + "\n";
    if (c.move.kind == kind && c.move.detail.find(needle) != std::string::npos &&
        c.proof.status == verify::smt::ProofStatus::Proved) {
      expect_same_values(g, c.move);
      return c;
    }
  }
  ADD_FAILURE() << "no proved " << kind << " (" << needle << ") among:\n" << seen;
  return {};
}

const char* kChain = R"(
import numpy as np

def chain(A: "f32[64, 512]", B: "f32[512, 512]", C: "f32[512, 8]"):
    return (A @ B) @ C
)";

}  // namespace

TEST(rewrite_discover, RMSNormRowScalePastMatmul) {
  ir::Graph g = workload("m1_rmsnorm_matmul");
  Candidate c = must_find(g, "factor-out-of-contraction", "multiply by");
  EXPECT_LT(c.after_cost.bytes, c.before.bytes);
}

// GELU's 1 + tanh(u) as 2 / (1 + exp(-2u)): proved with the tanh-as-exp
// axiom, and cheaper in the cost model (one exp, no tanh: loop::op_weight),
// still a row kernel.
TEST(rewrite_discover, GeluTanhAsOneExp) {
  ir::Graph g = workload("s5_gelu");
  Candidate c = must_find(g, "tanh-via-exp");
  ASSERT_TRUE(loop::plan_row_kernel(g).ok && loop::plan_row_kernel(c.after).ok);
  EXPECT_LT(rewrite::cost(c.after).flops, rewrite::cost(g).flops);
}

// After tanh-via-exp, GELU is 0.5 x (2 / (1 + exp((0.798 (...)) (-2)))):
// the constants fold to x / (1 + exp(-1.596 (...))), two fewer ops per
// element, and explore chooses it.
TEST(rewrite_discover, GeluConstantsFoldAfterTanhViaExp) {
  ir::Graph g = workload("s5_gelu");
  Candidate t = must_find(g, "tanh-via-exp");
  Candidate half = must_find(t.after, "fold-constants", "as one, 1");
  Candidate twice = must_find(t.after, "fold-constants", "as one, -1.5957691216057308");
  rewrite::ExploreResult e = rewrite::explore(g);
  const rewrite::RewrittenGraph& best = e.best.at(0);
  int folds = 0;
  for (const auto& s : best.steps) folds += s.move.kind == "fold-constants";
  EXPECT_EQ(folds, 2);
  ASSERT_TRUE(loop::plan_row_kernel(t.after).ok && loop::plan_row_kernel(best.graph).ok);
  // 0.5 x, 2 / t -> x / t; the -2 (...): three ops on every element fewer.
  const double elements = static_cast<double>(g[g.outputs[0]].type.numel());
  EXPECT_EQ(rewrite::cost(best.graph).flops, rewrite::cost(t.after).flops - 3 * elements);
  EXPECT_EQ(ir::print(best.graph).find("value = 0.5"), std::string::npos) << ir::print(best.graph);
}

// Constants fold only when nothing is lost: every step exact in double, and
// the same constant in f32 as the rounded constants would give (all but one
// a power of two, or all of them and the result exact in f32).
TEST(rewrite_discover, ConstantsFoldOnlyWhenExact) {
  struct Case {
    const char* expr;
    const char* folded;  // the detail's constant, or nullptr: not offered
  } cases[] = {
      {"(X * 0.1) * 4.0", "as one, 0.40000000000000002"},
      {"(X * 3.0) * 5.0", "as one, 15"},
      {"(X * 0.7978845608028654) * -2.0", "as one, -1.5957691216057308"},
      {"(0.5 * X) * (2.0 / Y)", "as one, 1"},
      {"(X / 4.0) / Y * 8.0", "as one, 2"},
      {"(X * 0.1) * 0.3", nullptr},     // 0.1 * 0.3 rounds in double
      {"(X * 1.1) * 3.0", nullptr},     // exact in double, but 1.1 is not an f32
      {"(X * 3.0) / 7.0", nullptr},     // 3 / 7 rounds
      {"X * 2.0", nullptr},             // one constant: nothing to gather
      {"(X * 0.0) * 2.0", nullptr},     // zero: 0 * inf would change place
  };
  for (const Case& c : cases) {
    ir::Graph g = from_source(std::string("import numpy as np\n\ndef f(X: \"f32[4, 6]\", Y: \"f32[4, 6]\"):\n    return ") +
                              c.expr + "\n");
    std::vector<Candidate> found;
    for (Candidate& k : rewrite::discover(g))
      if (k.move.kind == "fold-constants") found.push_back(k);
    if (!c.folded) {
      EXPECT_TRUE(found.empty()) << c.expr << ": " << (found.empty() ? "" : found[0].move.detail);
      continue;
    }
    ASSERT_EQ(found.size(), 1u) << c.expr;
    EXPECT_NE(found[0].move.detail.find(c.folded), std::string::npos) << c.expr << ": " << found[0].move.detail;
    EXPECT_EQ(found[0].proof.status, verify::smt::ProofStatus::Proved) << c.expr << found[0].proof.reason;
    EXPECT_LT(rewrite::cost(found[0].after).flops, rewrite::cost(g).flops) << c.expr;
    expect_same_values(g, found[0].move);
  }
}

TEST(rewrite_discover, SoftmaxDivisionAfterMatmul) {
  ir::Graph g = workload("m11_softmax_matmul");
  must_find(g, "factor-out-of-contraction", "divide by");
}

TEST(rewrite_discover, AttentionNormalisesAfterTheValueProduct) {
  ir::Graph g = workload("m5_attention");
  must_find(g, "factor-out-of-contraction", "divide by");
  must_find(g, "transpose-into-contraction");
}

TEST(rewrite_discover, LoRAAsOneContractionAndAssociationByFlops) {
  ir::Graph g = workload("m4_lora");
  must_find(g, "sum-of-contractions");
  Candidate r = must_find(g, "reassociate", "(A@B)@C");
  // X@(A@B) builds a full K x N product: more FLOPs, so on its own (without
  // the library's distributivity, see below) it is not chosen.
  EXPECT_GT(r.after_cost.flops, r.before.flops);
  rewrite::ExploreResult e = rewrite::explore(g);
  for (const auto& s : e.best.at(0).steps) EXPECT_NE(s.move.kind, "reassociate");
}

TEST(rewrite_discover, GatedMLPProjectionsAsOneContraction) {
  ir::Graph g = workload("m3_gated_mlp");
  must_find(g, "shared-operand-merge", "share X");
}

TEST(rewrite_discover, ThreeMatmulChainReassociatesTowardFewerFlops) {
  ir::Graph g = from_source(kChain);
  Candidate c = must_find(g, "reassociate", "(A@B)@C");
  EXPECT_LT(c.after_cost.flops, c.before.flops);
  rewrite::ExploreResult e = rewrite::explore(g);
  ASSERT_FALSE(e.best.empty());
  ASSERT_EQ(e.best[0].steps.size(), 1u);
  EXPECT_EQ(e.best[0].steps[0].move.kind, "reassociate");
  EXPECT_EQ(e.best[0].steps[0].proof.status, verify::smt::ProofStatus::Proved);
}

TEST(rewrite_discover, RefusesExpPastMatmulWithACounterexample) {
  ir::Graph g = from_source(R"(
import numpy as np

def f(X: "f32[16, 32]", W: "f32[32, 8]"):
    return np.exp(X) @ W
)");
  bool refused = false;
  for (const Candidate& c : rewrite::discover(g))
    if (c.move.kind == "unary-past-contraction") {
      EXPECT_EQ(c.proof.status, verify::smt::ProofStatus::Refuted) << c.proof.reason;
      EXPECT_FALSE(c.proof.counterexample.empty());
      refused = true;
    }
  EXPECT_TRUE(refused);
  // The same move is right for a negation.
  must_find(from_source(R"(
import numpy as np

def f(X: "f32[16, 32]", W: "f32[32, 8]"):
    return (-X) @ W
)"),
            "unary-past-contraction");
}

TEST(rewrite_discover, ExploreRespectsItsBudgets) {
  ir::Graph g = workload("m4_lora");
  rewrite::ExploreOptions o;
  o.max_variants = 2;
  rewrite::ExploreResult e = rewrite::explore(g, o);
  EXPECT_EQ(e.stop, rewrite::StopReason::VariantBudget);
  EXPECT_LE(e.variants, 2);
  o = {};
  o.max_iterations = 1;
  e = rewrite::explore(g, o);
  EXPECT_EQ(e.stop, rewrite::StopReason::IterationBudget);
  EXPECT_EQ(e.iterations, 1);
  o = {};
  o.max_seconds = 0;
  e = rewrite::explore(g, o);
  EXPECT_EQ(e.stop, rewrite::StopReason::TimeBudget);
  EXPECT_EQ(e.proofs, 0);
  ASSERT_EQ(e.best.size(), 1u);  // only the original
  o = {};
  o.k = 2;
  e = rewrite::explore(g, o);
  EXPECT_EQ(e.stop, rewrite::StopReason::Saturated);
  EXPECT_LE(e.best.size(), 2u);
  for (size_t i = 1; i < e.best.size(); ++i)
    EXPECT_LE(rewrite::cost_score(e.best[i - 1].cost), rewrite::cost_score(e.best[i].cost));
}

TEST(rewrite_discover, ExplainJsonShape) {
  const char* bin = std::getenv("AXON_BIN");
  if (!bin) GTEST_SKIP() << "AXON_BIN not set (ctest sets it)";
  std::string cmd = std::string(bin) + " explain --json " + AXON_SOURCE_DIR + "/bench/workloads/m4_lora.py";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_TRUE(p);
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  ASSERT_EQ(pclose(p), 0) << out;
  nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["entry"], "m4_lora");
  ASSERT_TRUE(j["cost"].contains("flops") && j["cost"].contains("bytes"));
  bool lora = false;
  for (const auto& r : j["rewrites"]) {
    for (const char* k : {"kind", "detail", "status", "solver_ms", "counterexample", "cost_before", "cost_after"})
      EXPECT_TRUE(r.contains(k)) << k;
    if (r["kind"] == "sum-of-contractions" && r["status"] == "proved") lora = true;
  }
  EXPECT_TRUE(lora);
  EXPECT_TRUE(j["chosen"]["steps"].is_array());
  EXPECT_TRUE(j["chosen"]["ir"].is_string());
  EXPECT_EQ(j["explore"]["stop"], "saturated");
  EXPECT_GT(j["library"]["rules_used"].get<int>(), 0);
}

TEST(rewrite_discover, OnlineSoftmaxOverTwoTilesOfTheKeyAxis) {
  for (const char* w : {"m11_softmax_matmul", "m5_attention"}) {
    Candidate c = must_find(workload(w), "online-softmax");
    EXPECT_NE(c.proof.trace.size(), 0u) << w;
  }
}

TEST(rewrite_discover, OnlineSoftmaxRefusedUnderACausalMask) {
  // A tile that the mask empties has max -inf: exp(-inf - -inf) is NaN.
  bool refused = false;
  for (const Candidate& c : rewrite::discover(workload("m6_causal_attention")))
    if (c.move.kind == "online-softmax") {
      EXPECT_EQ(c.proof.status, verify::smt::ProofStatus::Refuted) << c.proof.reason;
      EXPECT_FALSE(c.proof.counterexample.empty());
      refused = true;
    }
  EXPECT_TRUE(refused);
}

TEST(rewrite_discover, IndexDivisionBySumOfSizesFolds) {
  // Row-major offsets over an axis of size A + B (the tiled key axis).
  using verify::smt::SymIndex;
  verify::smt::ProofContext ctx({"A", "B"}, {}, 1000, 1000);
  SymIndex a = SymIndex::var("A"), b = SymIndex::var("B");
  SymIndex i0 = SymIndex::var(ctx.fresh_var("w", SymIndex::literal(4)));
  SymIndex i1 = SymIndex::var(ctx.fresh_var("w", a + b));
  SymIndex t = SymIndex::var(ctx.fresh_var("t", b));
  EXPECT_EQ(((a + b) * i0 + i1) / (a + b), i0);
  EXPECT_EQ(((a + b) * i0 + i1) % (a + b), i1);
  EXPECT_EQ((a + t) % (a + b), a + t);  // the second tile: A + t < A + B
  EXPECT_EQ((a + t) / (a + b), SymIndex::literal(0));
  EXPECT_EQ((a + b + t) / (a + b), SymIndex::literal(1));
  EXPECT_ANY_THROW((void)((i1 + t) / (a + b)));  // may reach 2A + 2B - 2: not provably below A + B
}

// Grouped-query attention splits the 32 query heads into 8 groups of 4
// (q.reshape(8, 4, 128)). The proof's sizes derive 32 as 4 * n8, so every
// move on m7 is proved or refused, none unknown, and the three that apply
// (the transpose into the product, the division after the value product,
// the online softmax) are proved.
TEST(rewrite_discover, GroupedQueryHeadsSplitIntoDerivedSizes) {
  ir::Graph g = workload("m7_gqa_decode");
  rewrite::SizeSymbols sym = rewrite::size_symbols(g, 0);
  EXPECT_EQ(sym.dims, (std::vector<std::string>{"n8", "n128", "n4096"}));
  ASSERT_EQ(sym.derived.size(), 1u);
  EXPECT_EQ(sym.derived[0].size, 32);
  EXPECT_EQ(sym.derived[0].times, 4);
  EXPECT_EQ(sym.derived[0].part, "n8");
  EXPECT_EQ(sym.at({{"n8", 5}, {"n128", 3}, {"n4096", 7}}),
            (std::map<int64_t, int64_t>{{8, 5}, {32, 20}, {128, 3}, {4096, 7}}));
  std::set<std::string> proved;
  for (const Candidate& c : rewrite::discover(g)) {
    EXPECT_NE(c.proof.status, verify::smt::ProofStatus::Unknown) << c.move.kind << ": " << c.proof.reason;
    if (c.proof.status == verify::smt::ProofStatus::Proved) {
      proved.insert(c.move.kind);
      expect_same_values(g, c.move);
    }
  }
  EXPECT_EQ(proved, (std::set<std::string>{"transpose-into-contraction", "factor-out-of-contraction", "online-softmax"}));
  // Parts that do not multiply back into a size (a reshape of [6, 4] into
  // [4, 6]) derive nothing: every parameter size stays a free symbol.
  ir::Graph mixed = from_source(R"(
import numpy as np

def f(x: "f32[6, 4]", w: "f32[6, 3]"):
    return x.reshape(4, 6) @ w
)");
  rewrite::SizeSymbols none = rewrite::size_symbols(mixed, 0);
  EXPECT_TRUE(none.derived.empty());
  EXPECT_EQ(none.dims, (std::vector<std::string>{"n3", "n4", "n6"}));
}

// Derived sizes and reshape strides decode back from their placeholder
// values: a literal multiple of a size, a product of sizes; and the flat
// index of a reshape of [4 N, D] into [N, 4, D] divides back into its parts.
TEST(rewrite_discover, MultiplesAndProductsOfSizesDecode) {
  using verify::smt::SymIndex;
  verify::smt::ProofContext ctx({"N", "D"}, {}, 1000, 1000);
  const int64_t pn = verify::smt::placeholder_size(0), pd = verify::smt::placeholder_size(1);
  SymIndex n = SymIndex::var("N"), d = SymIndex::var("D");
  EXPECT_EQ(SymIndex(4 * pn), SymIndex::literal(4) * n);
  EXPECT_EQ(SymIndex(pn * pd), n * d);
  EXPECT_EQ(SymIndex(-(4 * pn * pd)), SymIndex() - SymIndex::literal(4) * n * d);
  EXPECT_EQ(SymIndex(pn + pd + 3), n + d + SymIndex::literal(3));  // sums as before
  EXPECT_ANY_THROW((void)SymIndex(pn * pn * pn * pd));  // four factors: no reading
  SymIndex a = SymIndex::var(ctx.fresh_var("o", n));
  SymIndex b = SymIndex::var(ctx.fresh_var("o", SymIndex::literal(4)));
  SymIndex e = SymIndex::var(ctx.fresh_var("o", d));
  SymIndex flat = a * SymIndex(4 * pd) + b * SymIndex(pd) + e;  // [N, 4, D] row-major
  EXPECT_EQ((flat / SymIndex(pd)) % SymIndex(4 * pn), SymIndex::literal(4) * a + b);
  EXPECT_EQ(flat % SymIndex(pd), e);
}

TEST(rewrite_discover, ExploreCombinesPropagationWithLibraryRules) {
  // LoRA: X@W + (X@A)@B -> X@W + X@(A@B) (reassociate) -> X@(W + A@B)
  // (library distributivity): fewer FLOPs than the original.
  ir::Graph g = workload("m4_lora");
  rewrite::ExploreOptions o;
  o.library = rewrite::load_library(std::string(AXON_SOURCE_DIR) + "/rules/library.json");
  ASSERT_FALSE(o.library.empty());
  rewrite::ExploreResult e = rewrite::explore(g, o);
  const rewrite::RewrittenGraph& best = e.best.at(0);
  EXPECT_LT(best.cost.flops, rewrite::cost(g).flops);
  bool used_library = false;
  for (const auto& s : best.steps) {
    EXPECT_EQ(s.proof.status, verify::smt::ProofStatus::Proved) << s.move.detail;
    used_library = used_library || s.move.kind == "library-rule";
  }
  EXPECT_TRUE(used_library);
  // Replay the steps at small sizes and compare values with the original.
  ir::Graph small = rewrite::resize(g, small_sizes(g)), cur = small;
  for (const auto& s : best.steps) {
    std::optional<ir::Graph> next = rewrite::apply_move(cur, s.move);
    ASSERT_TRUE(next) << s.move.detail;
    cur = *next;
  }
  auto in = verify::random_inputs(small, 3);
  auto a = verify::interpret(small, in), b = verify::interpret(cur, in);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a[0].data.size(); ++i)
    ASSERT_NEAR(a[0].data[i], b[0].data[i], 1e-9 * (1 + std::abs(a[0].data[i])));
}

// SiLU after a matmul written as y * (1 / (1 + exp(-y))): the sum of the
// product, y = SUM_k x W, appears inside the body of another sum (the product
// y * r distributes into SUM_k x W r, whose r holds y again). Proving the
// fold of the 1 used to send the translator into endless recursion (a
// nested sum compared against the sum that contains it, whose body named it
// again) and the process died of a stack overflow; now the fold is proved
// and explore() finishes.
TEST(rewrite_discover, NestedSumInsideASumBodyIsClassifiedOnce) {
  ir::Graph g = from_source(
      "import numpy as np\n\n"
      "def f(x: \"f32[128, 1024]\", W: \"f32[1024, 1024]\"):\n"
      "    y = x @ W\n"
      "    return y * (1.0 / (1.0 + np.exp(-y)))\n");
  rewrite::ExploreResult e = rewrite::explore(g);
  bool fold_proved = false;
  for (const Candidate& c : e.tried)
    fold_proved = fold_proved || (c.move.kind == "fold-constants" && c.proof.status == verify::smt::ProofStatus::Proved);
  EXPECT_TRUE(fold_proved);
  const rewrite::RewrittenGraph& best = e.best.at(0);
  ASSERT_EQ(best.steps.size(), 1u);
  EXPECT_EQ(best.steps[0].move.kind, "fold-constants");
  EXPECT_LT(rewrite::cost_score(best.cost), rewrite::cost_score(rewrite::cost(g)));
  expect_same_values(g, best.steps[0].move);
}
