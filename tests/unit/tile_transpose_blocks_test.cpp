// Pass transpose_blocks (tile/passes/transpose_blocks.h): IR in, IR out. An
// elementwise nest reading an operand across its rows reads it through
// W x W blocks in scratch, edges included; the program stays well formed and
// computes the same values; nests without a transposed read are left alone.
// The partition leaves such transposes (and those keeping the last axis) to
// the loops that read them; the compiled kernels are within budget.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cpu_test_support.h"
#include "loop/partition.h"
#include "tile/interpret.h"
#include "tile/passes/transpose_blocks.h"
#include "tile/pipeline.h"
#include "tile/print.h"
#include "tile/verify.h"
#include "tile_test_support.h"
#include "verify/interpreter.h"

namespace axon {
namespace {

using tile::Kernel;
using tile::Scope;
using tile::Stmt;
using tile::StmtKind;

std::string spec(const std::string& params, const std::string& body) {
  return "import numpy as np\n\ndef f(" + params + "):\n    return " + body + "\n";
}

// Copies into scratch blocks of side w, and Loads of scratch buffers.
struct Counts {
  int copies = 0, tile_loads = 0;
};
Counts counts(const Kernel& k, int64_t w) {
  Counts c;
  tile::visit(k.body, [&](const Stmt& s) {
    if (s.kind() == StmtKind::Copy && k.buffers[s->c.buffer].scope == Scope::Scratch && s->extents ==
        std::vector<int64_t>{w, w})
      ++c.copies;
    if (s.kind() == StmtKind::Store)
      s->value.visit_loads([&](const tile::Value& l) { c.tile_loads += k.buffers[l.buffer()].scope == Scope::Scratch; });
  });
  return c;
}

// The loops pipeline without transpose_blocks (its input), on `threads`.
Kernel lowered(const ir::Graph& g, int threads) {
  tile::LoopsOptions o;
  o.threads = threads;
  o.vectorize = false;
  return tile::lower_with(g, tile::loops_pipeline(o), "f");
}

void expect_same_values(const Kernel& a, const Kernel& b, const ir::Graph& g, const std::string& what) {
  std::vector<ir::Tensor> in = test::graph_inputs(g, 5);
  std::vector<ir::Tensor> x = tile::interpret(a, in), y = tile::interpret(b, in);
  ASSERT_EQ(x.size(), y.size()) << what;
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x[i].data, y[i].data) << what << ": output " << i;
}

// Against the graph's float64 meaning: a transpose and these maps round
// nothing the interpreter does not, so the values agree to float64 rounding.
void expect_reference(const Kernel& k, const ir::Graph& g, const std::string& what) {
  std::vector<ir::Tensor> in = test::graph_inputs(g, 5);
  std::vector<ir::Tensor> got = tile::interpret(k, in), want = verify::interpret(g, in);
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].data.size(), want[i].data.size()) << what;
    for (size_t j = 0; j < got[i].data.size(); ++j)
      ASSERT_NEAR(got[i].data[j], want[i].data[j], 1e-12 * (1 + std::fabs(want[i].data[j]))) << what << ": element " << j;
  }
}

// Transposed reads of 2-D, 3-D and 4-D operands, with extents that are
// whole blocks, blocks and a remainder on one axis or on both, and one read
// both ways: each gets blocks, the same values, a well-formed program.
TEST(tile_transpose_blocks, TransposedReadsGoThroughBlocksWithTheSameValues) {
  const std::vector<std::pair<std::string, std::string>> programs = {
      {"x: \"f32[48, 32]\", y: \"f32[32, 48]\"", "np.transpose(x) * 2.0 + y"},
      {"x: \"f32[37, 50]\", y: \"f32[50, 37]\"", "np.transpose(x) * 2.0 + y"},
      {"x: \"f32[6, 40, 33]\", b: \"f32[40]\"", "x.transpose(2, 0, 1) + b"},
      {"x: \"f32[2, 24, 5, 19]\"", "np.tanh(np.transpose(x, (0, 2, 3, 1)))"},
      {"x: \"f32[40, 40]\"", "x.T - x"},
  };
  for (const auto& [params, body] : programs) {
    ir::Graph g = test::parse(spec(params, body));
    for (int threads : {1, 2})
      for (int w : {8, 16}) {
        Kernel before = lowered(g, threads);
        Kernel after = tile::transpose_blocks(before, w);
        const std::string what = body + " at " + params + ", W " + std::to_string(w) + ", " +
                                 std::to_string(threads) + " thread(s)\n" + tile::print(after);
        EXPECT_EQ(test::problems_text(tile::verify(after)), "") << what;
        const Counts c = counts(after, w);
        EXPECT_EQ(c.copies, 1) << what;
        EXPECT_GE(c.tile_loads, 1) << what;
        EXPECT_EQ(counts(before, w).copies, 0) << what;
        expect_same_values(before, after, g, what);
        expect_reference(after, g, what);
      }
  }
}

// Left alone: reads along the rows already, a transposed read too short
// for a block, a width below 2, and a transposed read summed (no Store-only
// nest).
TEST(tile_transpose_blocks, NestsWithoutABlockableReadAreLeftAlone) {
  const std::vector<std::pair<std::string, std::string>> programs = {
      {"x: \"f32[48, 32]\", y: \"f32[48, 32]\"", "x * 2.0 + y"},
      {"x: \"f32[5, 64]\", y: \"f32[64, 5]\"", "np.transpose(x) + y"},
      {"x: \"f32[48, 32]\"", "np.sum(np.transpose(x), axis=1)"},
      {"x: \"f32[8, 48, 32]\", y: \"f32[48, 8, 32]\"", "np.transpose(x, (1, 0, 2)) + y"},
  };
  for (const auto& [params, body] : programs) {
    ir::Graph g = test::parse(spec(params, body));
    Kernel before = lowered(g, 1);
    EXPECT_EQ(tile::print(tile::transpose_blocks(before, 16)), tile::print(before)) << body;
  }
  ir::Graph g = test::parse(spec("x: \"f32[48, 32]\"", "np.transpose(x) + 1.0"));
  Kernel before = lowered(g, 1);
  EXPECT_EQ(tile::print(tile::transpose_blocks(before, 1)), tile::print(before));
  EXPECT_NE(tile::print(tile::transpose_blocks(before, 16)), tile::print(before));
}

// The kinds of stage each transpose gets: read in place by loops when its
// last axis stays contiguous or all that is computed from it is elementwise
// maps; a Copy stage when it is returned as it is or a reduction reads it or
// a map of it.
TEST(tile_transpose_blocks, PartitionLeavesReadableTransposesToTheirLoops) {
  struct Case {
    std::string params, body;
    bool copy;
  };
  const std::vector<Case> cases = {
      {"x: \"f32[512, 64, 128]\", y: \"f32[64, 512, 128]\"", "np.transpose(x, (1, 0, 2)) + y", false},
      {"x: \"f32[8, 64, 16, 64]\"", "np.transpose(x, (0, 2, 1, 3)) * 0.125", false},
      {"x: \"f32[8, 64, 16, 64]\"", "np.transpose(x, (0, 2, 1, 3))", false},
      {"x: \"f32[64, 32, 48]\", b: \"f32[32]\"", "x.transpose(2, 0, 1) + b", false},
      {"x: \"f32[4, 16, 8, 8]\"", "np.transpose(x, (0, 2, 3, 1))", true},
      {"x: \"f32[64, 48]\"", "np.sum(np.transpose(x), axis=0)", true},
      {"x: \"f32[64, 48]\"", "np.sum(np.exp(np.transpose(x)), axis=1)", true},
      {"x: \"f32[64, 3, 4]\"", "np.transpose(x, (1, 0, 2)) + 1.0", false},
  };
  for (const Case& c : cases) {
    ir::Graph g = test::parse(spec(c.params, c.body));
    loop::Partition p = loop::partition_graph(g);
    bool copy = false;
    for (const loop::Stage& s : p.stages) copy |= s.kind == loop::StageKind::Copy;
    EXPECT_EQ(copy, c.copy) << c.body << " at " << c.params;
  }
}

// Compiled at the default schedule on AVX-512 and AVX2: the blocks print as
// register transposes and every output is within its error budget.
TEST(tile_transpose_blocks, CompiledKernelsAreWithinBudget) {
  const std::vector<std::pair<std::string, std::string>> programs = {
      {"x: \"f32[6, 40, 33]\", b: \"f32[40]\"", "x.transpose(2, 0, 1) + b"},
      {"x: \"f32[37, 50]\", y: \"f32[50, 37]\"", "np.maximum(np.transpose(x), y)"},
      {"x: \"f32[20, 9, 48]\", y: \"f32[9, 20, 48]\"", "np.transpose(x, (1, 0, 2)) + y"},
  };
  for (const auto& [params, body] : programs) {
    ir::Graph g = test::parse(spec(params, body));
    for (const target::Target& t : test::targets()) {
      schedule::Schedule s = schedule::default_schedule(schedule::schedule_space(g, t));
      const std::string what = body + " at " + std::to_string(t.isa.vector_bits()) + " bits";
      const std::string src = backend::emit_cpu(g, s, t).source;
      if (body.find("(1, 0, 2)") == std::string::npos && t.isa.vector_bits() >= 256)
        EXPECT_NE(src.find(t.isa.vector_bits() == 512 ? "axon_transpose16(" : "axon_transpose8("), std::string::npos)
            << what << "\n" << src;
      test::expect_correct(g, s, t, what, 11);
    }
  }
}

}  // namespace
}  // namespace axon
