// Pass prefetch_next_rows (tile/passes/prefetch_next_rows.h): IR in, IR out.
// The chosen later vector loop of each row prefetches the next row of every
// row input it reads, kept in cache; the first loop, per-column inputs and
// one-loop rows are left alone; values do not change.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/c_like/tile_cpp.h"
#include "cpu_test_support.h"
#include "tile/interpret.h"
#include "tile/passes/prefetch_next_rows.h"
#include "tile/pipeline.h"
#include "tile/print.h"
#include "tile/verify.h"
#include "tile_test_support.h"

namespace axon {
namespace {

using tile::Kernel;
using tile::LoopKind;
using tile::Stmt;
using tile::StmtKind;

// Per vector loop, in program order: the names of the buffers it prefetches
// with `temporal`, and their distances.
struct Loop {
  std::vector<std::string> fetched;
  std::vector<int64_t> ahead;
};
std::vector<Loop> vector_loops(const Kernel& k) {
  std::vector<Loop> out;
  tile::visit(k.body, [&](const Stmt& s) {
    if (s.kind() != StmtKind::For || s->loop != LoopKind::Vectorized) return;
    Loop l;
    tile::visit(s->body.at(0), [&](const Stmt& x) {
      if (x.kind() == StmtKind::Prefetch && x->temporal) l.fetched.push_back(k.buffers[x->buffer].name), l.ahead.push_back(x->ahead);
    });
    out.push_back(l);
  });
  return out;
}

// A layernorm of X + Y scaled by a per-column g: three loops over the row
// read X and Y (mean, variance, output), g only in the last.
const char* kNorm =
    "import numpy as np\n\ndef f(X: \"f32[6, 100]\", Y: \"f32[6, 100]\", g: \"f32[100]\"):\n"
    "    z = X + Y\n    mu = np.mean(z, axis=-1, keepdims=True)\n"
    "    v = np.mean((z - mu) ** 2, axis=-1, keepdims=True)\n    return (z - mu) / np.sqrt(v + 1e-5) * g\n";

TEST(tile_prefetch_next_rows, TheChosenLaterLoopFetchesTheNextRowOfEachRowInput) {
  ir::Graph g = test::parse(kNorm);
  Kernel before = tile::lower_with(g, tile::loops_pipeline(tile::LoopsOptions{}), "f");
  const size_t loops = vector_loops(before).size();
  ASSERT_GE(loops, 3u) << tile::print(before);
  for (int pass : {1, 2, 9}) {
    Kernel after = tile::prefetch_next_rows(before, pass);
    const std::string what = "pass " + std::to_string(pass) + "\n" + tile::print(after);
    EXPECT_EQ(test::problems_text(tile::verify(after)), "") << what;
    std::vector<Loop> got = vector_loops(after);
    ASSERT_EQ(got.size(), loops) << what;
    // The passes reading a row input are the mean, the variance (each a
    // block of 64 columns and a tail of 36) and the output: pass 9 is the
    // last of them.
    ASSERT_EQ(loops, 5u) << tile::print(before);
    const std::vector<size_t> pass_loops[3] = {{0, 1}, {2, 3}, {4}};
    std::vector<bool> fetching(loops, false);
    for (size_t i : pass_loops[std::min(pass, 2)]) fetching[i] = true;
    for (size_t i = 0; i < got.size(); ++i) {
      if (!fetching[i]) {
        EXPECT_TRUE(got[i].fetched.empty()) << "loop " << i << ": " << what;
        continue;
      }
      EXPECT_EQ(got[i].fetched, (std::vector<std::string>{"X", "Y"})) << what;  // never the per-column g
      EXPECT_EQ(got[i].ahead, (std::vector<int64_t>{400, 400})) << what;        // one row of 100 floats on
    }
    std::vector<ir::Tensor> in = test::random_inputs(before, {0, 1, 2}, 5);
    std::vector<ir::Tensor> a = tile::interpret(before, in), b = tile::interpret(after, in);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].data, b[i].data);
    codegen::TileCppOptions po;
    po.vector_bits = 256;
    EXPECT_NE(codegen::print_tile_cpp(after, g, "a test kernel", po).source.find(") + 400), 0, 3);"), std::string::npos) << what;
  }
  EXPECT_EQ(tile::print(tile::prefetch_next_rows(before, 0)), tile::print(before));
}

TEST(tile_prefetch_next_rows, OneLoopRowsAreLeftAlone) {
  ir::Graph g = test::parse("import numpy as np\n\ndef f(X: \"f32[6, 100]\"):\n    return np.sum(X * X, axis=-1)\n");
  Kernel k = tile::lower_with(g, tile::loops_pipeline(tile::LoopsOptions{}), "f");
  EXPECT_EQ(tile::print(tile::prefetch_next_rows(k, 1)), tile::print(k));
}

// Compiled row stages at every prefetch_pass, on the host and AVX2: the
// prefetches of the last row pass the inputs' ends.
TEST(tile_prefetch_next_rows, RowStagesAtEveryPrefetchPassAreCorrect) {
  ir::Graph g = test::parse(kNorm);
  for (const auto& t : test::targets()) {
    schedule::Space sp = schedule::schedule_space(g, t);
    const schedule::Knob* knob = sp.find("k0.prefetch_pass");
    ASSERT_NE(knob, nullptr);
    EXPECT_EQ(knob->values.front(), 0);
    EXPECT_EQ(knob->values.size(), 3u);  // two reductions and the output pass
    for (int64_t p : knob->values) {
      schedule::Schedule s = schedule::default_schedule(sp);
      s["k0.prefetch_pass"] = p;
      test::expect_correct(g, s, t, "prefetch_pass " + std::to_string(p) + " at " + std::to_string(t.isa.vector_bits()), 3);
    }
  }
}

}  // namespace
}  // namespace axon
