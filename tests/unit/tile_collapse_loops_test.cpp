// Pass collapse_loops (tile/passes/collapse_loops.h): IR in, IR out. Short
// loops over axes that are contiguous in memory become one loop with the
// loop around them (an NCHW tensor's 7 x 7 or 28 x 28 spatial axes); loops
// that walk memory otherwise, top-level loops and loops whose variable is a
// value stay as they are; the values are the same, exactly (the iterations
// run in the same order); and as_affine reads the collapsed indices.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "cpu_test_support.h"
#include "tile/interpret.h"
#include "tile/passes/collapse_loops.h"
#include "tile/pipeline.h"
#include "tile/print.h"
#include "tile/verify.h"
#include "tile_test_support.h"

namespace axon {
namespace {

using tile::Index;
using tile::Kernel;
using tile::Stmt;
using tile::StmtKind;

// The loops pipeline's passes before collapse_loops.
std::vector<tile::Pass> before_collapse() {
  std::vector<tile::Pass> out;
  for (const tile::Pass& p : tile::loops_pipeline(tile::LoopsOptions{})) {
    if (p.name == "collapse_loops") return out;
    out.push_back(p);
  }
  ADD_FAILURE() << "the loops pipeline has no collapse_loops";
  return out;
}

// The extents of every loop, in the order they appear.
std::vector<int64_t> extents(const Kernel& k) {
  std::vector<int64_t> out;
  tile::visit(k.body, [&](const Stmt& s) {
    if (s.kind() == StmtKind::For && s->extent.is_const()) out.push_back(s->extent.value());
  });
  return out;
}

int count(const std::vector<int64_t>& v, int64_t x) { return static_cast<int>(std::count(v.begin(), v.end(), x)); }

// Lowered up to the pass and through it, checked by the verifier and by
// the interpreter on the same inputs: outputs equal bit for bit.
struct Collapsed {
  Kernel before, after;
};
Collapsed run(const std::string& spec) {
  ir::Graph g = test::parse(spec);
  Collapsed c;
  c.before = tile::lower_with(g, before_collapse(), "f");
  c.after = tile::collapse_loops(c.before);
  EXPECT_EQ(test::problems_text(tile::verify(c.after)), "") << tile::print(c.after);
  std::vector<ir::Tensor> in;
  for (const auto& p : g.params) {
    ir::Tensor t{p.type, std::vector<double>(static_cast<size_t>(p.type.numel()))};
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + 0.1));
    in.push_back(t);
  }
  std::vector<ir::Tensor> a = tile::interpret(c.before, in), b = tile::interpret(c.after, in);
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) EXPECT_EQ(a[i].data, b[i].data) << "output " << i;
  return c;
}

const char* kBatchNorm =
    "import numpy as np\n\ndef f(x: \"f32[4, 6, 7, 7]\"):\n"
    "    mu = np.mean(x, axis=(0, 2, 3), keepdims=True)\n"
    "    return np.mean((x - mu) ** 2, axis=(0, 2, 3)), x * 2.0 - mu\n";

TEST(tile_collapse_loops, SpatialAxesBecomeOneLoop) {
  Collapsed c = run(kBatchNorm);
  const std::vector<int64_t> before = extents(c.before), after = extents(c.after);
  EXPECT_GT(count(before, 7), 0) << tile::print(c.before);
  // The 7 x 7 loops of both reductions and of the elementwise output are
  // 49 long; the output's loop over channels stays (its mean is read per
  // channel: the flat offset of t6[0, f / 49, 0, 0] is not affine).
  EXPECT_EQ(count(after, 7), 0) << tile::print(c.after);
  EXPECT_EQ(count(after, 49), 3) << tile::print(c.after);
  EXPECT_EQ(count(after, 6), count(before, 6)) << tile::print(c.after);
  // Without it, the collapsed loop collapses again with the channels'.
  Collapsed e = run("import numpy as np\n\ndef f(x: \"f32[4, 6, 7, 7]\"):\n    return x * 2.0 + 1.0\n");
  EXPECT_EQ(extents(e.after), (std::vector<int64_t>{4, 294})) << tile::print(e.after);
  // Loops stay at the top level, so that parallelize finds them.
  ASSERT_EQ(c.after.body.kind(), StmtKind::Seq);
  for (const Stmt& s : c.after.body->body)
    if (s.kind() == StmtKind::For) EXPECT_TRUE(s->extent.is_const() && (s->extent.value() == 4 || s->extent.value() == 6)) << tile::print(c.after);
}

TEST(tile_collapse_loops, LoopsThatWalkMemoryOtherwiseStay) {
  const char* kept[] = {
      // Transposed: the inner loop walks the outer axis of x.
      "def f(x: \"f32[5, 7, 9]\"):\n    return np.transpose(x, (0, 2, 1)) * 3.0\n",
      // A loop variable used as a value (an iota) is not an element access.
      "def f(x: \"f32[5, 6, 7]\"):\n    return x + np.arange(7, dtype=np.float32)\n",
      // Kept pixels around a sum over channels: interchange_sums' nest.
      "def f(x: \"f32[2, 6, 7, 7]\"):\n    return np.sum(x * x, axis=1)\n",
      // A long inner loop is left for vectorize as it is.
      "def f(x: \"f32[3, 4, 256]\"):\n    return x * 2.0\n",
  };
  for (const char* spec : kept) {
    Collapsed c = run(std::string("import numpy as np\n\n") + spec);
    EXPECT_EQ(tile::print(c.after), tile::print(c.before)) << spec;
  }
}

TEST(tile_collapse_loops, AffineReadsCollapsedIndices) {
  const Index f = Index::var("f"), r4 = Index::var("r4"), r5 = Index::var("r5");
  std::optional<tile::Affine> a = tile::as_affine(f / Index(28) * Index(28) + f % Index(28));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->constant, 0);
  EXPECT_EQ(a->coef, (std::map<std::string, int64_t>{{"f", 1}}));
  // Strip-mined after collapsing, and scaled by a stride.
  const Index e = r4 * Index(64) + r5;
  a = tile::as_affine(e / Index(28) * Index(84) + e % Index(28) * Index(3) + Index(5));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->constant, 5);
  EXPECT_EQ(a->coef, (std::map<std::string, int64_t>{{"r4", 192}, {"r5", 3}}));
  // Unpaired or mismatched quotients and remainders are not affine.
  EXPECT_FALSE(tile::as_affine(f / Index(28)).has_value());
  EXPECT_FALSE(tile::as_affine(f % Index(28)).has_value());
  EXPECT_FALSE(tile::as_affine(f / Index(28) * Index(27) + f % Index(28)).has_value());
  EXPECT_FALSE(tile::as_affine(f / Index(28) * Index(28) + f % Index(14)).has_value());
}

// Compiled at the default schedule and at one thread, on the host and AVX2:
// correct against the float64 reference.
TEST(tile_collapse_loops, CompiledKernelsAreCorrect) {
  for (const char* spec : {kBatchNorm,
                           "import numpy as np\n\ndef f(x: \"f32[2, 8, 14, 14]\", g: \"f32[1, 8, 1, 1]\"):\n"
                           "    y = x.reshape(2, 2, 4, 14, 14)\n"
                           "    mu = np.mean(y, axis=(2, 3, 4), keepdims=True)\n"
                           "    v = np.mean((y - mu) ** 2, axis=(2, 3, 4), keepdims=True)\n"
                           "    return ((y - mu) / np.sqrt(v + 1e-5)).reshape(2, 8, 14, 14) * g\n"}) {
    ir::Graph g = test::parse(spec);
    for (const auto& t : test::targets()) {
      schedule::Space sp = schedule::schedule_space(g, t);
      for (int threads : {1, 2}) {
        schedule::Schedule s = schedule::default_schedule(sp);
        for (auto& [name, value] : s)
          if (name.size() > 7 && name.compare(name.size() - 7, 7, "threads") == 0) value = threads;
        test::expect_correct(g, s, t, std::string(spec).substr(40, 30) + " threads " + std::to_string(threads), 3);
      }
    }
  }
}

}  // namespace
}  // namespace axon
