// Rewrites that change the order of the work: a sum over a contraction's
// output taken in the operand that carries the summed label
// (sum-into-contraction), and a chain of contractions re-bracketed by FLOPs
// (reassociate-chain). On the three programs of tests/optimize/specs
// (rowsum_of_product, matvec_chain, total_of_product) each must be found,
// proved by Z3 over symbolic sizes, cost O(n^2) FLOPs where the original
// costs O(n^3), and give the original's values on random inputs. A sum over
// a label both operands carry must not move, and stating that move by hand
// must be refused by the prover.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/cost.h"
#include "frontend/spec.h"
#include "ir/printer.h"
#include "loop/partition.h"
#include "rewrite/rewrite.h"
#include "transforms/pipeline.h"
#include "verify/inputs.h"
#include "verify/interpreter.h"
#include "verify/smt/sketch.h"

using namespace axon;
using rewrite::Candidate;

namespace {

ir::Graph spec_file(const std::string& name) {
  auto spec = frontend::load_spec(std::string(AXON_SOURCE_DIR) + "/tests/optimize/specs/" + name + ".py", {});
  return transforms::run_pipeline(std::move(spec.graph));
}

ir::Graph from_source(const std::string& body) {
  auto spec = frontend::parse_spec("inline.py", "import numpy as np\n\n" + body, {});
  return transforms::run_pipeline(std::move(spec.graph));
}

std::string listing(const std::vector<Candidate>& cs) {
  std::string s;
  for (const Candidate& c : cs)
    s += "  " + c.move.kind + " [" + verify::smt::proof_status_name(c.proof.status) + "] " + c.move.detail + "\n";
  return s;
}

// The proved candidate of `kind` on `g`; fails the test when there is none.
Candidate proved(const ir::Graph& g, const std::string& kind) {
  std::vector<Candidate> cs = rewrite::discover(g);
  for (Candidate& c : cs)
    if (c.move.kind == kind && c.proof.status == verify::smt::ProofStatus::Proved) return c;
  ADD_FAILURE() << "no proved " << kind << " among:\n" << listing(cs);
  return {};
}

// The graph at other sizes: every parameter size in `sizes` replaced.
ir::Graph at_sizes(const ir::Graph& g, const std::map<int64_t, int64_t>& sizes) { return rewrite::resize(g, sizes); }

// `m` replayed on `g` at `sizes` agrees with `g` on random inputs, in float64
// (the interpreter's arithmetic), to rounding.
void expect_same_values(const ir::Graph& g, const rewrite::Move& m, const std::map<int64_t, int64_t>& sizes) {
  ir::Graph small = at_sizes(g, sizes);
  std::optional<ir::Graph> after = rewrite::apply_move(small, m);
  ASSERT_TRUE(after) << m.kind << " does not replay at small sizes";
  for (uint64_t seed : {7, 8, 9}) {
    auto in = verify::random_inputs(small, seed);
    auto a = verify::interpret(small, in), b = verify::interpret(*after, in);
    ASSERT_EQ(a.size(), b.size());
    for (size_t o = 0; o < a.size(); ++o) {
      ASSERT_EQ(a[o].type, b[o].type);
      ASSERT_FALSE(a[o].data.empty());
      for (size_t i = 0; i < a[o].data.size(); ++i)
        ASSERT_NEAR(a[o].data[i], b[o].data[i], 1e-10 * (1 + std::abs(a[o].data[i])))
            << m.kind << " output " << o << "[" << i << "]";
    }
  }
}

// For a program of f32[512, 512] operands: the original does 2 n^3 FLOPs,
// the moved graph at most 4 n^2, and doubling n multiplies the moved
// graph's FLOPs by about 4 (quadratic), the original's by 8 (cubic).
void expect_quadratic(const ir::Graph& g, const Candidate& c) {
  const double n = 512;
  double before = analysis::graph_cost(g).flops, after = analysis::graph_cost(c.after).flops;
  EXPECT_GE(before, 2 * n * n * n);
  EXPECT_LE(after, 4 * n * n) << ir::print(c.after);
  ir::Graph big = at_sizes(g, {{512, 1024}});
  std::optional<ir::Graph> big_after = rewrite::apply_move(big, c.move);
  ASSERT_TRUE(big_after);
  double growth = analysis::graph_cost(*big_after).flops / after;
  EXPECT_GT(growth, 3.9);
  EXPECT_LT(growth, 4.1);
  EXPECT_NEAR(analysis::graph_cost(big).flops / before, 8.0, 0.1);
}

// explore() ends on a variant whose steps include `kind`, with FLOPs below
// the original's by more than 100x.
void expect_chosen(const ir::Graph& g, const std::string& kind) {
  rewrite::ExploreResult e = rewrite::explore(g);
  ASSERT_FALSE(e.best.empty());
  bool used = false;
  for (const auto& s : e.best[0].steps) {
    used |= s.move.kind == kind;
    EXPECT_EQ(s.proof.status, verify::smt::ProofStatus::Proved);
  }
  EXPECT_TRUE(used) << ir::print(e.best[0].graph);
  EXPECT_LT(e.best[0].cost.flops * 100, rewrite::cost(g).flops);
}

bool has_kind(const std::vector<Candidate>& cs, const std::string& kind) {
  for (const Candidate& c : cs)
    if (c.move.kind == kind) return true;
  return false;
}

}  // namespace

TEST(rewrite_complexity, RowSumOfProductFoldsIntoTheRightOperand) {
  ir::Graph g = spec_file("rowsum_of_product");
  Candidate c = proved(g, "sum-into-contraction");
  // A @ B.sum(1): B is summed first, then one matrix-vector product.
  EXPECT_NE(ir::print(c.after).find("\"mk,k->m\""), std::string::npos) << ir::print(c.after);
  expect_quadratic(g, c);
  expect_same_values(g, c.move, {{512, 9}});
  expect_chosen(g, "sum-into-contraction");
}

TEST(rewrite_complexity, MatrixProductTimesVectorReassociates) {
  ir::Graph g = spec_file("matvec_chain");
  Candidate c = proved(g, "reassociate-chain");
  EXPECT_NE(c.move.detail.find("A @ (B @ v)"), std::string::npos) << c.move.detail;
  expect_quadratic(g, c);
  expect_same_values(g, c.move, {{512, 9}});
  expect_chosen(g, "reassociate-chain");
}

TEST(rewrite_complexity, TotalOfProductIsColumnSumsDotRowSums) {
  ir::Graph g = spec_file("total_of_product");
  Candidate c = proved(g, "sum-into-contraction");
  EXPECT_NE(ir::print(c.after).find("\"k,k->\""), std::string::npos) << ir::print(c.after);
  expect_quadratic(g, c);
  expect_same_values(g, c.move, {{512, 9}});
  expect_chosen(g, "sum-into-contraction");
}

// Mean is a sum times a constant: the sum moves and the constant stays. On a
// batched product the batch label b stays outside while n moves into B;
// non-square sizes are separate symbols in the proof.
TEST(rewrite_complexity, MeanOverBatchedProductMovesOnlyTheOneSidedLabel) {
  ir::Graph g = from_source(
      "def f(A: \"f32[6, 10, 12]\", B: \"f32[6, 12, 14]\"):\n    return np.mean(A @ B, axis=(0, 2))\n");
  Candidate c = proved(g, "sum-into-contraction");
  EXPECT_NE(c.move.detail.find("carried by both operands stays outside"), std::string::npos) << c.move.detail;
  const std::string ir = ir::print(c.after);
  // B summed over its last axis, the product, then the batch axis summed.
  EXPECT_NE(ir.find("reduce_sum(%1) {axes = [2]}"), std::string::npos) << ir;
  EXPECT_NE(ir.find("{axes = [0]}"), std::string::npos) << ir;
  EXPECT_LT(rewrite::cost(c.after).flops, rewrite::cost(g).flops);
  expect_same_values(g, c.move, {{6, 3}, {10, 5}, {12, 4}, {14, 7}});
}

TEST(rewrite_complexity, EinsumWithSeveralLabelsSumsEachIntoItsOperand) {
  ir::Graph g = from_source(
      "def f(X: \"f32[5, 6, 7]\", Y: \"f32[7, 8, 9]\"):\n"
      "    return np.sum(np.einsum(\"abk,kcd->abcd\", X, Y), axis=(1, 3))\n");
  Candidate c = proved(g, "sum-into-contraction");
  EXPECT_NE(c.move.detail.find("X summed over b"), std::string::npos) << c.move.detail;
  EXPECT_NE(c.move.detail.find("Y summed over d"), std::string::npos) << c.move.detail;
  EXPECT_LT(rewrite::cost(c.after).flops * 10, rewrite::cost(g).flops);
  expect_same_values(g, c.move, {{5, 3}, {6, 4}, {7, 5}, {8, 2}, {9, 6}});
}

// A sum over a batch label (both operands carry it) is not a linear map of
// either operand alone: no move is offered, on a batched matmul or on an
// einsum whose summed output label comes from both operands.
TEST(rewrite_complexity, SumOverALabelBothOperandsCarryDoesNotMove) {
  for (const char* src : {
           "def f(A: \"f32[8, 16, 32]\", B: \"f32[8, 32, 24]\"):\n    return np.sum(A @ B, axis=0)\n",
           "def f(X: \"f32[16, 32]\", Y: \"f32[16, 32]\"):\n"
           "    return np.sum(np.einsum(\"ij,ij->ij\", X, Y), axis=1)\n",
       }) {
    std::vector<Candidate> cs = rewrite::discover(from_source(src));
    EXPECT_FALSE(has_kind(cs, "sum-into-contraction")) << src << listing(cs);
  }
  // The control: the same batched product summed over n does move.
  EXPECT_TRUE(has_kind(rewrite::discover(from_source(
                           "def f(A: \"f32[8, 16, 32]\", B: \"f32[8, 32, 24]\"):\n    return np.sum(A @ B, axis=2)\n")),
                       "sum-into-contraction"));
}

// Moving the batch sum anyway, sum_b A[b] @ B[b] -> (sum_b A[b]) @ (sum_b
// B[b]), is wrong, and the prover says so with a counterexample.
TEST(rewrite_complexity, ProverRefusesMovingABatchSum) {
  using verify::smt::DimSizes;
  using verify::smt::Sketch;
  verify::smt::RewriteCase c = verify::smt::rewrite_case(
      "batch-sum-into-operands", {"Bt", "M", "K", "N"},
      [](const DimSizes& d) {
        return std::vector<std::pair<std::string, ir::Shape>>{{"A", {d.at("Bt"), d.at("M"), d.at("K")}},
                                                              {"B", {d.at("Bt"), d.at("K"), d.at("N")}}};
      },
      [](Sketch& s, const DimSizes&) { s.output(s.sum(s.einsum("bmk,bkn->bmn", s.in("A"), s.in("B")), 0)); },
      [](Sketch& s, const DimSizes&) { s.output(s.matmul(s.sum(s.in("A"), 0), s.sum(s.in("B"), 0))); });
  verify::smt::ProofOptions o;
  o.axioms = verify::smt::AxiomSet::all();
  verify::smt::ProofResult r = verify::smt::prove_equal(c, o);
  EXPECT_EQ(r.status, verify::smt::ProofStatus::Refuted) << r.reason;
  EXPECT_FALSE(r.counterexample.empty());
}

// A batched chain (rank 3) and a five-matrix chain: the bracketing is the
// one of fewest FLOPs over all of them (here worked out by hand).
TEST(rewrite_complexity, ChainOrderIsTheOneOfFewestFlops) {
  ir::Graph batched = from_source(
      "def f(A: \"f32[4, 64, 64]\", B: \"f32[4, 64, 64]\", C: \"f32[4, 64, 2]\"):\n    return (A @ B) @ C\n");
  Candidate b = proved(batched, "reassociate-chain");
  EXPECT_NE(b.move.detail.find("A @ (B @ C)"), std::string::npos) << b.move.detail;
  EXPECT_DOUBLE_EQ(rewrite::cost(b.after).flops, 2.0 * (2 * 4 * 64 * 64 * 2));
  expect_same_values(batched, b.move, {{4, 2}, {64, 5}});

  ir::Graph five = from_source(
      "def f(A: \"f32[64, 256]\", B: \"f32[256, 128]\", C: \"f32[128, 512]\", D: \"f32[512, 8]\", E: \"f32[8, 300]\"):\n"
      "    return A @ B @ C @ D @ E\n");
  Candidate c = proved(five, "reassociate-chain");
  EXPECT_NE(c.move.detail.find("(A @ (B @ (C @ D))) @ E"), std::string::npos) << c.move.detail;
  // C@D, B@(CD), A@(B(CD)), then @E.
  const double best = 2.0 * (128 * 512 * 8 + 256 * 128 * 8 + 64 * 256 * 8 + 64 * 8 * 300);
  EXPECT_DOUBLE_EQ(rewrite::cost(c.after).flops, best);
  expect_same_values(five, c.move, {{64, 3}, {256, 4}, {128, 5}, {512, 6}, {8, 2}, {300, 7}});
  // Already in its best order: nothing to offer.
  EXPECT_FALSE(has_kind(rewrite::discover(c.after), "reassociate-chain"));
}

// A chain whose best bracketing splits it in two runs of two, (A @ B) @ (C @ D):
// the description names both runs (each takes its split from the pre-order
// list in turn), and the move builds that order: 2*(2*64*2 + 2*64*2 + 2*2*2)
// FLOPs against 2*3*(2*64*2) as written.
TEST(rewrite_complexity, ChainSplitInTwoRunsIsDescribedAndBuilt) {
  ir::Graph g = from_source(
      "def f(A: \"f32[2, 64]\", B: \"f32[64, 2]\", C: \"f32[2, 64]\", D: \"f32[64, 2]\"):\n"
      "    return A @ B @ C @ D\n");
  Candidate c = proved(g, "reassociate-chain");
  EXPECT_NE(c.move.detail.find("as (A @ B) @ (C @ D) "), std::string::npos) << c.move.detail;
  EXPECT_DOUBLE_EQ(rewrite::cost(c.after).flops, 2.0 * (2 * 64 * 2 + 2 * 64 * 2 + 2 * 2 * 2));
  EXPECT_DOUBLE_EQ(rewrite::cost(g).flops, 2.0 * 3 * (2 * 64 * 2));
  expect_same_values(g, c.move, {{2, 3}, {64, 5}});
}

// The same with the sides broadcast by indexing with None, as numpy users
// write it: the reshapes that insert unit axes are read axis by axis, so
// the proof over symbolic sizes goes through (a flat row-major index would
// need products of sizes), and the cross term is a contraction the GEMM
// takes (its unit labels summed in one operand only are no axes).
TEST(rewrite_complexity, SquaredDistancesOfNoneIndexedSidesAreProved) {
  ir::Graph g = from_source(
      "def f(a: \"f32[12, 8]\", b: \"f32[10, 8]\"):\n"
      "    return np.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1)\n");
  Candidate c = proved(g, "expand-square-of-difference");
  expect_same_values(g, c.move, {{12, 5}, {10, 3}, {8, 4}});
  ir::NodeId cross = -1;
  for (ir::NodeId i = 0; i < c.after.size(); ++i)
    if (c.after[i].op == ir::Op::Einsum) cross = i;
  ASSERT_GE(cross, 0) << ir::print(c.after);
  loop::Contraction con;
  std::string why;
  EXPECT_TRUE(loop::plan_contraction(c.after, cross, &con, &why)) << why;
  EXPECT_EQ(con.M, 12);
  EXPECT_EQ(con.N, 10);
  EXPECT_EQ(con.K, 8);
}

// Pairwise squared distances: sum_k (a - b)^2 over broadcast sides as
// |a|^2 + |b|^2 - 2 a.b, the cross term one einsum (fewer FLOPs, and no
// [M, N, K] intermediate). A sum along an axis one side broadcasts is not
// expanded.
TEST(rewrite_complexity, SquaredDistancesExpandIntoOneContraction) {
  ir::Graph g = from_source(
      "def f(a: \"f32[12, 1, 8]\", b: \"f32[1, 10, 8]\"):\n    return np.sum((a - b) ** 2, axis=-1)\n");
  Candidate c = proved(g, "expand-square-of-difference");
  EXPECT_NE(ir::print(c.after).find("einsum"), std::string::npos) << ir::print(c.after);
  EXPECT_LT(rewrite::cost(c.after).flops, rewrite::cost(g).flops);
  EXPECT_LT(rewrite::cost(c.after).bytes, rewrite::cost(g).bytes);
  expect_same_values(g, c.move, {{12, 5}, {10, 3}, {8, 4}});
  EXPECT_FALSE(has_kind(
      rewrite::discover(from_source(
          "def f(a: \"f32[12, 1, 8]\", b: \"f32[1, 10, 8]\"):\n    return np.sum((a - b) ** 2, axis=1)\n")),
      "expand-square-of-difference"));
}
