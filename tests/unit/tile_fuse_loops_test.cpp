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
#include "tile/passes/fuse_loops.h"
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
};

Fused run(const std::string& spec) {
  ir::Graph g = test::parse("import numpy as np\n\n" + spec);
  Fused f;
  f.before = tile::lower_with(g, before_fuse(), "f");
  f.after = tile::fuse_loops(f.before);
  EXPECT_EQ(test::problems_text(tile::verify(f.after)), "") << tile::print(f.after);
  std::vector<ir::Tensor> in = test::graph_inputs(g, 3);
  std::vector<ir::Tensor> a = tile::interpret(f.before, in), b = tile::interpret(f.after, in);
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) EXPECT_EQ(a[i].data, b[i].data) << "output " << i;
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

}  // namespace
}  // namespace axon
