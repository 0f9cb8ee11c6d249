// Operands computed where the GEMM packs them: loop/gemm_prologue.h joins
// the row stage that computes a product's A or B elementwise (X * g, W *
// h) to the product's stage, a norm's or a softmax's statistics left to
// the row stage, and leaves the look-alikes alone (the operand also
// returned, or read by another stage); the
// fused kernels, compiled on AVX-512 and AVX2 with the operand computed as
// packed and computed whole first, are within the error budget of the
// reference; and the rewrite factor-across-contraction carries an RMSNorm's
// gain from A to B, so that m1's row stage computes the row scale alone.
#include <gtest/gtest.h>

#include <string>

#include "cpu_test_support.h"
#include "tile_test_support.h"
#include "loop/describe.h"
#include "loop/partition.h"
#include "rewrite/rewrite.h"

namespace axon {
namespace {

std::string kinds(const loop::Partition& p) {
  std::string s;
  for (const auto& st : p.stages) s += std::string(s.empty() ? "" : " ") + loop::stage_kind_name(st.kind);
  return s;
}

const std::string kHead =
    "import numpy as np\n\n"
    "def f(X: \"f32[40, 72]\", g: \"f32[72]\", W: \"f32[72, 48]\", h: \"f32[72]\", b: \"f32[48]\"):\n";

TEST(gemm_prologue, AnElementwiseOperandJoinsItsProduct) {
  auto part = [](const std::string& body) { return loop::partition_graph(test::parse(kHead + body)); };
  {
    // A = X * g: the row stage goes; X is read in place of A, g after.
    const ir::Graph gr = test::parse(kHead + "    return (X * g) @ W\n");
    const loop::Partition p = loop::partition_graph(gr);
    ASSERT_EQ(kinds(p), "contraction");
    const loop::Stage& st = p.stages[0];
    ASSERT_TRUE(st.a_rows.active());
    EXPECT_FALSE(st.b_rows.active());
    ASSERT_EQ(st.inputs.size(), 3u);  // X, W, g
    for (size_t i = 0; i < 3; ++i) ASSERT_EQ(gr[st.inputs[i]].op, ir::Op::Param) << i;
    EXPECT_EQ(gr[st.inputs[0]].attrs.ints.at(0), 0);
    EXPECT_EQ(gr[st.inputs[1]].attrs.ints.at(0), 2);
    EXPECT_EQ(gr[st.inputs[2]].attrs.ints.at(0), 1);
  }
  {
    // B = W * h along k, with an epilogue: both in one stage.
    const loop::Partition p = part("    return np.tanh(X @ (W * h[:, None]) + b)\n");
    ASSERT_EQ(kinds(p), "epilogue");
    EXPECT_TRUE(p.stages[0].b_rows.active());
    EXPECT_FALSE(p.stages[0].a_rows.active());
  }
  {
    // The row stage keeps its other result (the row scale the epilogue reads).
    const loop::Partition p =
        part("    s = 1.0 / np.sqrt(np.mean(X * X, axis=-1, keepdims=True) + 1e-6)\n    return ((X * g) @ W) * s\n");
    ASSERT_EQ(kinds(p), "row epilogue");
    EXPECT_EQ(p.stages[0].results.size(), 1u);
    EXPECT_EQ(p.stages[0].sub.outputs.size(), 1u);
    EXPECT_TRUE(p.stages[1].a_rows.active());
  }
  {
    // A computed with a reduction (an RMSNorm, a softmax): the row stage
    // returns the statistics (one value per row each) and the product
    // computes the rest of A at each element.
    const loop::Partition p = part("    return (X / np.sqrt(np.mean(X * X, axis=-1, keepdims=True)) * g) @ W\n");
    ASSERT_EQ(kinds(p), "row contraction");
    ASSERT_EQ(p.stages[0].results.size(), 1u);
    EXPECT_EQ(p.stages[0].sub.outputs.size(), 1u);
    EXPECT_EQ(p.stages[0].sub[p.stages[0].sub.outputs[0]].type.numel(), 40);
    EXPECT_TRUE(p.stages[1].a_rows.active());
    const loop::Partition q = part("    e = np.exp(X - np.max(X, axis=-1, keepdims=True))\n"
                                   "    return (e / np.sum(e, axis=-1, keepdims=True)) @ W\n");
    ASSERT_EQ(kinds(q), "row contraction");
    EXPECT_EQ(q.stages[0].results.size(), 2u);  // the max and the sum
    EXPECT_TRUE(q.stages[1].a_rows.active());
  }
  // Look-alikes: A also returned; A read by two products.
  for (const std::string& body : {std::string("    a = X * g\n    return a @ W, a\n"),
                                  std::string("    a = X * g\n    return a @ W, a @ (W * 2.0)\n")}) {
    const loop::Partition p = part(body);
    for (const loop::Stage& st : p.stages) EXPECT_FALSE(st.a_rows.active()) << body;  // (W * 2.0 is a B prologue)
    EXPECT_EQ(p.stages.at(0).kind, loop::StageKind::Row) << body;
  }
}

TEST(gemm_prologue, FusedKernelsAreWithinBudget) {
  for (const std::string& body : {std::string("    return (X * g) @ W\n"),
                                  std::string("    return np.tanh(X @ (W * h[:, None]) + b)\n"),
                                  std::string("    e = np.exp(X - np.max(X, axis=-1, keepdims=True))\n"
                                              "    return (e / np.sum(e, axis=-1, keepdims=True)) @ W\n"),
                                  std::string("    return ((X + 1.0) * g) @ (W / (h[:, None] + 3.0))\n")}) {
    const ir::Graph g = test::parse(kHead + body);
    ASSERT_TRUE(loop::partition_graph(g).stages.back().a_rows.active() ||
                loop::partition_graph(g).stages.back().b_rows.active())
        << body;
    for (const target::Target& t : test::targets()) {
      const schedule::Space space = schedule::schedule_space(g, t);
      const std::string k = "k" + std::to_string(loop::partition_graph(g).stages.size() - 1) + ".gemm.";
      for (int64_t prologue : {1, 0})
        for (auto [threads, split_n] : test::kThreadSplits) {
            schedule::Schedule s = schedule::default_schedule(space);
            s[k + "prologue"] = prologue, s[k + "threads"] = threads, s[k + "split_n"] = split_n;
            // As packed: both operands packed; first: A read in place.
            s[k + "pack_a"] = prologue, s[k + "pack_b"] = 1;
            const std::string what = body + schedule::to_json(s).dump() + " on " + std::to_string(t.isa.vector_bits());
            test::expect_correct(g, s, t, what, 5);
          }
    }
  }
}

// m1 and m11 as written: the row stage returns the row statistics (m1's
// mean of squares as the scale, m11's max and sum), the product computes
// the normalised A; `axon explain` says so.
TEST(gemm_prologue, WorkloadsComputeTheirNormalisedOperands) {
  for (const char* name : {"m1_rmsnorm_matmul", "m11_softmax_matmul"}) {
    const ir::Graph g = test::load_workload(name);
    const loop::Partition p = loop::partition_graph(g);
    ASSERT_EQ(kinds(p), "row contraction") << name;
    for (ir::NodeId r : p.stages[0].results) EXPECT_EQ(g[r].type.numel(), 1024) << name;
    EXPECT_TRUE(p.stages[1].a_rows.active()) << name;
    const std::vector<loop::StageDescription> d = loop::describe_stages(g, p);
    EXPECT_NE(d.at(1).what.find("A computed by the kernel from its inputs (a prologue)"), std::string::npos) << d.at(1).what;
  }
}

// m1: the row scale moved past the product and the gain across it leaves
// the row stage with the scale alone, A = X read in place and B = W * g
// computed as it is packed.
TEST(gemm_prologue, TheGainMovesAcrossTheProduct) {
  const ir::Graph m1 = test::load_workload("m1_rmsnorm_matmul");
  const std::vector<rewrite::Move> moves = rewrite::candidate_moves(m1);
  int across = 0;
  for (const rewrite::Move& m : moves) across += m.kind == "factor-across-contraction";
  EXPECT_EQ(across, 1);
  rewrite::ExploreOptions eo;
  eo.k = 8;
  const rewrite::ExploreResult ex = rewrite::explore(m1, eo);
  bool found = false;
  for (const rewrite::RewrittenGraph& v : ex.best) {
    if (v.steps.size() != 2) continue;
    const loop::Partition p = loop::partition_graph(v.graph);
    if (kinds(p) != "row epilogue") continue;
    found = true;
    EXPECT_EQ(p.stages[0].results.size(), 1u);
    EXPECT_EQ(v.graph[p.stages[0].results[0]].type.shape, (ir::Shape{1024, 1}));
    EXPECT_FALSE(p.stages[1].a_rows.active());
    EXPECT_TRUE(p.stages[1].b_rows.active());
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace axon
