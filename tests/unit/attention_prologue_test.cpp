// QK-norm inside the attention kernel: tile/row_function.h computes one row
// of an RMSNorm or a LayerNorm as tile-IR statements (IR in -> IR out
// through the interpreter, against the graph's float64 reference);
// loop/attention_prologue.h joins the row stage that normalises Q and K to
// the Attention stage, and leaves the look-alikes alone; the fused kernels,
// compiled on AVX-512 and AVX2 at every attention knob that changes where
// the rows are normalised, are within the error budget of the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "codegen/cpu/attention.h"
#include "codegen/cpu/emit_cpu.h"
#include "cpu_test_support.h"
#include "loop/partition.h"
#include "tile/interpret.h"
#include "tile/print.h"
#include "tile/row_function.h"
#include "tile/verify.h"
#include "tile_test_support.h"
#include "verify/inputs.h"
#include "verify/interpreter.h"

namespace axon {
namespace {

const std::string kNorms =
    "import numpy as np\n\n"
    "def rms(X, g):\n"
    "    return X / np.sqrt(np.mean(X * X, axis=-1, keepdims=True) + 1e-6) * g\n\n"
    "def ln(X, g, b):\n"
    "    mu = np.mean(X, axis=-1, keepdims=True)\n"
    "    v = np.mean((X - mu) * (X - mu), axis=-1, keepdims=True)\n"
    "    return (X - mu) / np.sqrt(v + 1e-5) * g + b\n\n"
    "def softmax(s):\n"
    "    e = np.exp(s - np.max(s, axis=-1, keepdims=True))\n"
    "    return e / np.sum(e, axis=-1, keepdims=True)\n\n";

std::string kinds(const loop::Partition& p) {
  std::string s;
  for (const auto& st : p.stages) s += std::string(s.empty() ? "" : " ") + loop::stage_kind_name(st.kind);
  return s;
}

// A kernel that writes every row of graph output 0 (rank 3, params dense)
// through row_function: IR in, interpreted, against the graph's float64
// values.
void expect_rows_interpret_to_the_graph(const std::string& body, const std::string& what) {
  ir::Graph g = test::parse(kNorms + body);
  const ir::NodeId out = g.outputs.at(0);
  const ir::Shape& sh = g[out].type.shape;
  ASSERT_EQ(sh.size(), 3u) << what;
  tile::Kernel k;
  k.name = "rows";
  std::vector<int> ins;
  for (size_t p = 0; p < g.params.size(); ++p)
    ins.push_back(k.add_buffer({"in" + std::to_string(p), ir::DType::F32, {g.params[p].type.numel()}, tile::Scope::Input,
                                static_cast<int>(p)}));
  tile::Buffer ob{"out", ir::DType::F32, {g[out].type.numel()}, tile::Scope::Output};
  ob.output = 0;
  const int o = k.add_buffer(ob);
  auto param = [&](int p, const std::vector<tile::Index>& idx) {
    const ir::Type& ty = g.params.at(static_cast<size_t>(p)).type;
    tile::Index flat(0);
    int64_t stride = 1;
    for (int d = ty.rank() - 1; d >= 0; --d) {
      flat = flat + idx.at(static_cast<size_t>(d)) * tile::Index(stride);
      stride *= ty.shape[static_cast<size_t>(d)];
    }
    return tile::Value::load(ins.at(static_cast<size_t>(p)), {flat}, ty.dtype);
  };
  const tile::Index b = tile::Index::var("b"), i = tile::Index::var("i");
  tile::Stmt row = tile::row_function(&k, g, out, {b, i}, param, o, (b * tile::Index(sh[1]) + i) * tile::Index(sh[2]), "r");
  k.body = tile::Stmt::loop("b", tile::Index(sh[0]), tile::LoopKind::Parallel,
                            tile::Stmt::loop("i", tile::Index(sh[1]), tile::LoopKind::Serial, row));
  ASSERT_EQ(test::problems_text(tile::verify(k)), "") << what << "\n" << tile::print(k);
  std::vector<ir::Tensor> in = verify::random_inputs(g, 3);
  std::vector<double> got = tile::interpret(k, in).at(0).data;
  std::vector<double> want = verify::interpret(g, in).at(0).data;
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t e = 0; e < got.size(); ++e) ASSERT_NEAR(got[e], want[e], 1e-9 * (1 + std::fabs(want[e]))) << what << " element " << e;
  // One register per reduction: RMSNorm one, LayerNorm two.
  int regs = 0;
  for (const tile::Buffer& buf : k.buffers) regs += buf.scope == tile::Scope::Register;
  EXPECT_EQ(regs, body.find("ln(") != std::string::npos ? 2 : 1) << what;
}

TEST(attention_prologue, RowFunctionInterpretsToTheGraph) {
  expect_rows_interpret_to_the_graph("def f(X: \"f32[2, 5, 24]\", g: \"f32[24]\"):\n    return rms(X, g)\n", "rmsnorm");
  expect_rows_interpret_to_the_graph(
      "def f(X: \"f32[3, 4, 16]\", g: \"f32[16]\", b: \"f32[16]\"):\n    return ln(X, g, b)\n", "layernorm");
}

// m9 and small variants: which stages, and what the fused stage reads.
TEST(attention_prologue, QkNormJoinsTheAttentionStage) {
  ir::Graph m9 = test::load_workload("m9_qknorm_attention");
  loop::Partition p = loop::partition_graph(m9);
  ASSERT_EQ(kinds(p), "attention");
  const loop::Stage& st = p.stages[0];
  ASSERT_EQ(st.inputs.size(), 5u);  // Q, K, V, gq, gk: all parameters
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(m9[st.inputs[i]].op, ir::Op::Param) << i;
    EXPECT_EQ(m9[st.inputs[i]].attrs.ints.at(0), static_cast<int64_t>(i)) << i;
  }
  EXPECT_GE(st.attention.q_rows.out, 0);
  EXPECT_EQ(st.attention.q_rows.reads, std::vector<int>{2});  // gq
  EXPECT_GE(st.attention.k_rows.out, 0);
  EXPECT_EQ(st.attention.k_rows.reads, std::vector<int>{3});  // gk

  const std::string head = kNorms + "def f(Q: \"f32[2, 64, 64]\", K: \"f32[2, 128, 64]\", V: \"f32[2, 128, 64]\", "
                                    "g: \"f32[64]\", b: \"f32[64]\", R: \"f32[2, 64, 64]\"):\n";
  auto stages = [&](const std::string& body) { return kinds(loop::partition_graph(test::parse(head + body))); };
  const std::string attend = "    return softmax(q @ np.swapaxes(k, -1, -2) * 0.125) @ V\n";
  EXPECT_EQ(stages("    q = rms(Q, g)\n    k = K\n" + attend), "attention");
  EXPECT_EQ(stages("    q = Q\n    k = ln(K, g, b)\n" + attend), "attention");
  EXPECT_EQ(stages("    q = rms(Q + R, g)\n    k = ln(K, g, b)\n" + attend), "attention");
  // Look-alikes: the normalised Q also returned; a norm over the rows
  // (axis 1), not within each; one normalised value as both Q and K.
  EXPECT_EQ(stages("    q = rms(Q, g)\n    k = K\n    return softmax(q @ np.swapaxes(k, -1, -2)) @ V, q\n"),
            "row attention");
  EXPECT_NE(stages("    q = Q / np.sqrt(np.mean(Q * Q, axis=1, keepdims=True))\n    k = K\n" + attend), "attention");
  EXPECT_NE(stages("    q = rms(Q, g)\n    return softmax(q @ np.swapaxes(q, -1, -2)) @ R\n"), "attention");
}

// The fused stage's tile program (lower_attention with Q's and K's row
// functions), IR in -> IR out: verified and interpreted against the
// graph's float64 reference, with K^T packed up front, per key block and
// dot products, and split key ranges.
TEST(attention_prologue, FusedProgramInterpretsToTheGraph) {
  ir::Graph g = test::parse(kNorms + "def f(Q: \"f32[2, 8, 8]\", K: \"f32[2, 128, 8]\", V: \"f32[2, 128, 64]\", "
                                     "g: \"f32[8]\", b: \"f32[8]\"):\n"
                                     "    return softmax(rms(Q, g) @ np.swapaxes(ln(K, g, b), -1, -2)) @ V\n");
  loop::Partition p = loop::partition_graph(g);
  ASSERT_EQ(kinds(p), "attention");
  const loop::Stage& st = p.stages[0];
  std::vector<ir::Tensor> in = verify::random_inputs(g, 4);
  const std::vector<double> want = verify::interpret(g, in).at(0).data;
  for (int variant = 0; variant < 4; ++variant) {
    tile::AttentionSchedule s;
    s.bq = variant == 1 ? 8 : 4, s.bk = 32, s.mr = 2, s.nr = 4, s.threads = 2;
    s.transpose_k = variant != 2, s.splits = variant == 3 ? 2 : 1;
    s.pack_tile = variant == 0 ? 4 : 0;  // K^T by 4 x 4 copies from Kn
    tile::Kernel k = codegen::attention_kernel(g, st.attention, s, "attention");
    ASSERT_NE(tile::print(k).find("Qn["), std::string::npos);
    ASSERT_NE(tile::print(k).find("Kn["), std::string::npos);
    // The kernel's inputs are the stage's, all parameters of g here.
    std::vector<ir::Tensor> kin;
    for (size_t i = 0; i < st.inputs.size(); ++i) {
      ir::Tensor t = in.at(static_cast<size_t>(g[st.inputs[i]].attrs.ints.at(0)));
      t.type.shape = k.buffers[i].shape;
      kin.push_back(t);
    }
    std::vector<double> got = tile::interpret(k, kin).at(0).data;
    ASSERT_EQ(got.size(), want.size());
    for (size_t e = 0; e < got.size(); ++e) ASSERT_NEAR(got[e], want[e], 1e-9) << "variant " << variant << " element " << e;
  }
}

// Compiled on AVX-512 and AVX2: Q and K through RMSNorm and LayerNorm
// (with a residual read beside Q), only Q, only K; K^T packed up front, per
// key block (one query block) and dot products; split key ranges.
TEST(attention_prologue, FusedKernelsAreWithinBudget) {
  const std::string head = kNorms + "def f(Q: \"f32[2, 64, 64]\", K: \"f32[2, 192, 64]\", V: \"f32[2, 192, 64]\", "
                                    "g: \"f32[64]\", b: \"f32[64]\", R: \"f32[2, 64, 64]\"):\n";
  const std::string attend = "    return softmax(q @ np.swapaxes(k, -1, -2) * 0.5) @ V\n";
  for (const std::string& qk : {std::string("    q = rms(Q + R, g)\n    k = ln(K, g, b)\n"),
                                std::string("    q = ln(Q, g, b)\n    k = K * 0.5\n"),
                                std::string("    q = Q + R\n    k = rms(K, b)\n")}) {
    ir::Graph g = test::parse(head + qk + attend);
    ASSERT_EQ(kinds(loop::partition_graph(g)), "attention") << qk;
    for (const target::Target& t : test::targets()) {
      schedule::Space space = schedule::schedule_space(g, t);
      for (int64_t kt : {1, 0})
        for (int64_t bq : {16, 64})
          for (int64_t split : {1, 3}) {
            schedule::Schedule s = schedule::default_schedule(space);
            s["k0.attn.kt"] = kt, s["k0.attn.bq"] = bq, s["k0.attn.split"] = split, s["k0.attn.bk"] = 64;
            const std::string what = qk + schedule::to_json(s).dump() + " on " + std::to_string(t.isa.vector_bits());
            ASSERT_EQ(schedule::why_illegal(g, s, t), "") << what;
            test::expect_correct(g, s, t, what, 7);
          }
    }
  }
}

}  // namespace
}  // namespace axon
