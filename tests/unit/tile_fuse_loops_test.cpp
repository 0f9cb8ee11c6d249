// Pass fuse_loops (tile/passes/fuse_loops.h): IR in, IR out. Loops over the
// same rows fuse when the buffers they share are indexed by the loop
// variable in one same dimension, the first or another (a statistic kept
// with keepdims, t[0, c, 0, 0]); a buffer indexed otherwise keeps them apart;
// the values are the same bit for bit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cpu_test_support.h"
#include "tile/interpret.h"
#include "tile/passes/cascade_sums.h"
#include "tile/passes/fuse_loops.h"
#include "tile/passes/interchange_sums.h"
#include "tile/pipeline.h"
#include "tile/print.h"
#include "tile/verify.h"
#include "tile_test_support.h"

namespace axon {
namespace {

using tile::Kernel;
using tile::Stmt;
using tile::StmtKind;

// The loops pipeline's passes before fuse_loops.
std::vector<tile::Pass> before_fuse() {
  std::vector<tile::Pass> out;
  for (const tile::Pass& p : tile::loops_pipeline(tile::LoopsOptions{})) {
    if (p.name == "fuse_loops") return out;
    out.push_back(p);
  }
  ADD_FAILURE() << "the loops pipeline has no fuse_loops";
  return out;
}

int top_loops(const Kernel& k) {
  int n = 0;
  for (const Stmt& s : k.body->body) n += s.kind() == StmtKind::For;
  return n;
}

struct Fused {
  Kernel before, after;
  std::vector<ir::Tensor> inputs;  // the graph's random inputs the two were compared on
};

// Whether `b` computes what `a` does on `in`, bit for bit.
void expect_same_values(const Kernel& a, const Kernel& b, const std::vector<ir::Tensor>& in) {
  std::vector<ir::Tensor> x = tile::interpret(a, in), y = tile::interpret(b, in);
  EXPECT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) EXPECT_EQ(x[i].data, y[i].data) << "output " << i;
}

Fused run(const std::string& spec) {
  ir::Graph g = test::parse("import numpy as np\n\n" + spec);
  Fused f;
  f.before = tile::lower_with(g, before_fuse(), "f");
  f.after = tile::fuse_loops(f.before);
  EXPECT_EQ(test::problems_text(tile::verify(f.after)), "") << tile::print(f.after);
  f.inputs = test::graph_inputs(g, 3);
  expect_same_values(f.before, f.after, f.inputs);
  return f;
}

TEST(tile_fuse_loops, KeptStatisticsIndexedByTheChannelFuse) {
  // BatchNorm's mean and variance over (0, 2, 3), kept as [1, C, 1, 1]: both
  // loop over the channels, and the variance reads the mean at t[0, c, 0, 0].
  Fused f = run("def f(x: \"f32[2, 6, 4, 4]\"):\n"
                "    mu = np.mean(x, axis=(0, 2, 3), keepdims=True)\n"
                "    d = x - mu\n"
                "    v = np.mean(d * d, axis=(0, 2, 3), keepdims=True)\n"
                "    return d / np.sqrt(v + 1e-5)\n");
  // Four loops over the channels (two sums, and the two statistics kept as
  // [1, C, 1, 1]) and the normalisation's loop over the batch: the four
  // become one.
  EXPECT_EQ(top_loops(f.before), 5) << tile::print(f.before);
  EXPECT_EQ(top_loops(f.after), 2) << tile::print(f.after);
}

TEST(tile_fuse_loops, ABufferReadAcrossTheLoopKeepsThemApart) {
  // The mean read in reverse channel order: iteration c of the loop that
  // reads it would need what iteration C - 1 - c of the loop that writes it
  // computes, so those two stay apart; the reversed copy, t[0, c, 0, 0],
  // still fuses with the sum that reads it at the same channel.
  Fused f = run("def f(x: \"f32[2, 6, 4, 4]\"):\n"
                "    mu = np.mean(x, axis=(0, 2, 3), keepdims=True)\n"
                "    return np.mean(x * mu[:, ::-1], axis=(0, 2, 3))\n");
  // The sum, the reversed copy, the second sum, the division: the first
  // stays alone (had it fused, the copy would read sums not yet computed,
  // and the values would differ from the unfused kernel's).
  EXPECT_EQ(top_loops(f.before), 4) << tile::print(f.before);
  EXPECT_EQ(top_loops(f.after), 2) << tile::print(f.after);
}

TEST(tile_fuse_loops, ABatchOfColumnSumsFusesAndStillSumsInLanes) {
  // An L2 norm over the channels of [N, C, L]: for each n the sum runs down
  // the columns of x[n] (strided), and the division reads it at n. The loop
  // over n is a batch of whole column sums, so it fuses with the division,
  // and the column sum inside it is still interchange_sums' to take: each
  // batch sums in lanes along L, then divides while x[n] is in cache.
  Fused f = run("def f(x: \"f32[4, 24, 40]\"):\n"
                "    n = np.sqrt(np.sum(x * x, axis=1, keepdims=True))\n"
                "    return x / np.maximum(n, 1e-12)\n");
  // The sum, the norm, the division: one loop over n.
  EXPECT_EQ(top_loops(f.before), 3) << tile::print(f.before);
  EXPECT_EQ(top_loops(f.after), 1) << tile::print(f.after);
  Kernel lanes = tile::interchange_sums(tile::cascade_sums(f.after));
  EXPECT_EQ(test::problems_text(tile::verify(lanes)), "") << tile::print(lanes);
  // One loop still, and inside it a Scratch accumulator summing x.
  EXPECT_EQ(top_loops(lanes), 1) << tile::print(lanes);
  int lane_sums = 0;
  tile::visit(lanes.body, [&](const Stmt& s) {
    if (s.kind() != StmtKind::Accumulate || lanes.buffers[s->buffer].scope != tile::Scope::Scratch) return;
    s->value.visit_loads([&](const tile::Value& ld) { lane_sums += ld.buffer() == 0; });
  });
  EXPECT_GT(lane_sums, 0) << tile::print(lanes);
  expect_same_values(f.before, lanes, f.inputs);
}

TEST(tile_fuse_loops, AColumnSumOverTheWholeLoopStaysApart) {
  // np.sum(x, 0) of a matrix beside a row loop of the same extent: the
  // column sum's loop is the columns themselves, so it stays alone (its
  // body is a fold, not a batch of them); the row sum of y and the add fuse.
  Fused f = run("def f(x: \"f32[32, 32]\", y: \"f32[32, 32]\"):\n"
                "    return np.sum(x, axis=0) + np.sum(y, axis=1)\n");
  EXPECT_EQ(top_loops(f.after), top_loops(f.before) - 1) << tile::print(f.after);
  for (const Stmt& s : f.after.body->body) {
    if (s.kind() != StmtKind::For) continue;
    bool reads_x = false, reads_y = false;
    tile::visit(s, [&](const Stmt& st) {
      if (!st->value.defined()) return;
      st->value.visit_loads([&](const tile::Value& ld) {
        reads_x |= ld.buffer() == 0;
        reads_y |= ld.buffer() == 1;
      });
    });
    EXPECT_FALSE(reads_x && reads_y) << "the column sum of x fused with the row sum of y\n" << tile::print(f.after);
  }
}

}  // namespace
}  // namespace axon
