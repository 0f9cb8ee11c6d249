// Pass split_concat_reads (tile/passes/split_concat_reads.h): IR in, IR out.
// A concatenation read by loops over its axis is read from its pieces, each
// loop split at the pieces' boundaries, and its copy is gone; a
// concatenation read any other way stays copied; the values are the same
// bit for bit (the iterations run in the same order), and the compiled
// kernels are within their error budgets.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "cpu_test_support.h"
#include "tile/interpret.h"
#include "tile/passes/split_concat_reads.h"
#include "tile/pipeline.h"
#include "tile/print.h"
#include "tile/verify.h"
#include "tile_test_support.h"
#include "verify/interpreter.h"

namespace axon {
namespace {

using tile::Kernel;
using tile::Stmt;
using tile::StmtKind;

// The loops pipeline's passes before split_concat_reads.
std::vector<tile::Pass> before_split() {
  std::vector<tile::Pass> out;
  for (const tile::Pass& p : tile::loops_pipeline(tile::LoopsOptions{})) {
    if (p.name == "split_concat_reads") return out;
    out.push_back(p);
  }
  ADD_FAILURE() << "the loops pipeline has no split_concat_reads";
  return out;
}

struct Split {
  ir::Graph g;
  Kernel before, after;
};

// Lowered up to the pass and through it, checked by the verifier, and by
// the interpreter on the same inputs: the outputs equal bit for bit, and
// those of the graph's float64 interpreter closely.
Split run(const std::string& spec) {
  Split s;
  s.g = test::parse("import numpy as np\n\n" + spec);
  s.before = tile::lower_with(s.g, before_split(), "f");
  s.after = tile::split_concat_reads(s.before);
  EXPECT_EQ(test::problems_text(tile::verify(s.after)), "") << tile::print(s.after);
  std::vector<ir::Tensor> in = test::graph_inputs(s.g, 7);
  std::vector<ir::Tensor> a = tile::interpret(s.before, in), b = tile::interpret(s.after, in);
  std::vector<ir::Tensor> want = verify::interpret(s.g, in);
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    EXPECT_EQ(a[i].data, b[i].data) << "output " << i << "\n" << tile::print(s.after);
    for (size_t e = 0; e < b[i].data.size(); ++e)
      EXPECT_NEAR(b[i].data[e], want[i].data[e], 1e-4 * (1 + std::fabs(want[i].data[e]))) << "output " << i;
  }
  return s;
}

// The Memory buffers a kernel allocates.
int memory_buffers(const Kernel& k) {
  int n = 0;
  tile::visit(k.body, [&](const Stmt& s) {
    n += s.kind() == StmtKind::Alloc && k.buffers[static_cast<size_t>(s->buffer)].scope == tile::Scope::Memory;
  });
  return n;
}

// The extents of the loops whose body reads buffer `b`, innermost such loop
// first within each nest (each loop once).
std::multiset<int64_t> loops_reading(const Kernel& k, int b) {
  std::multiset<int64_t> out;
  tile::visit(k.body, [&](const Stmt& s) {
    if (s.kind() != StmtKind::For || !s->extent.is_const()) return;
    bool direct = false;  // a statement of its own body, not of an inner loop, reads b
    std::vector<Stmt> todo = {s->body.at(0)};
    while (!todo.empty()) {
      Stmt x = todo.back();
      todo.pop_back();
      if (x.kind() == StmtKind::Seq) todo.insert(todo.end(), x->body.begin(), x->body.end());
      else if (x.kind() != StmtKind::For && x->value.defined()) direct |= x->value.uses_buffer(b);
    }
    if (direct) out.insert(s->extent.value());
  });
  return out;
}

TEST(tile_split_concat_reads, AColumnSumOfStackedRowsReadsEachInputInItsOwnLoop) {
  Split s = run("def f(a: \"f32[3, 16]\", b: \"f32[5, 16]\"):\n    return np.mean(np.concatenate([a, b], axis=0), axis=0)\n");
  // Before: the concatenation is a buffer of its own (and the mean's sum).
  EXPECT_EQ(memory_buffers(s.before), 2) << tile::print(s.before);
  EXPECT_EQ(memory_buffers(s.after), 1) << tile::print(s.after);
  // The sum's loop over the 8 stacked rows is a loop over a's 3 and one over b's 5.
  EXPECT_EQ(loops_reading(s.after, 0), (std::multiset<int64_t>{3})) << tile::print(s.after);
  EXPECT_EQ(loops_reading(s.after, 1), (std::multiset<int64_t>{5})) << tile::print(s.after);
}

TEST(tile_split_concat_reads, AMapOfAConcatenationAlongTheLastAxisWritesEachPiece) {
  // Three pieces along the last axis, the middle one computed.
  Split s = run("def f(a: \"f32[4, 3]\", b: \"f32[4, 5]\", c: \"f32[4, 2]\"):\n"
                "    return np.maximum(np.concatenate([a, b * 2.0, c], axis=-1), 0.0)\n");
  EXPECT_EQ(memory_buffers(s.after), 0) << tile::print(s.after);
  EXPECT_EQ(loops_reading(s.after, 0), (std::multiset<int64_t>{3})) << tile::print(s.after);
  EXPECT_EQ(loops_reading(s.after, 1), (std::multiset<int64_t>{5})) << tile::print(s.after);
  EXPECT_EQ(loops_reading(s.after, 2), (std::multiset<int64_t>{2})) << tile::print(s.after);
}

TEST(tile_split_concat_reads, AConcatenationReadOtherwiseStaysCopied) {
  const char* kept[] = {
      // Returned as it is: the output is the concatenation's buffer.
      "def f(a: \"f32[3, 4]\", b: \"f32[5, 4]\"):\n    return np.concatenate([a, b], axis=0)\n",
      // Read through a reshape that folds the stacked axis into another.
      "def f(a: \"f32[3, 4]\", b: \"f32[5, 4]\"):\n    return np.sum(np.concatenate([a, b], axis=0).reshape(4, 8), axis=1)\n",
  };
  for (const char* spec : kept) {
    Split s = run(spec);
    EXPECT_EQ(tile::print(s.after), tile::print(s.before)) << spec;
  }
}

// Compiled at the default schedule, on one and two threads, on the host and
// AVX2: correct against the float64 reference.
TEST(tile_split_concat_reads, CompiledKernelsAreCorrect) {
  for (const char* spec : {"def f(a: \"f32[300, 64]\", b: \"f32[212, 64]\"):\n"
                           "    return np.mean(np.concatenate([a, b], axis=0), axis=0)\n",
                           "def f(a: \"f32[64, 24]\", b: \"f32[64, 40]\"):\n"
                           "    return np.maximum(np.concatenate([a, b], axis=-1), 0.0)\n"}) {
    ir::Graph g = test::parse(std::string("import numpy as np\n\n") + spec);
    for (const auto& t : test::targets()) {
      schedule::Space sp = schedule::schedule_space(g, t);
      for (int threads : {1, 2}) {
        schedule::Schedule s = schedule::default_schedule(sp);
        for (auto& [name, value] : s)
          if (name.size() > 7 && name.compare(name.size() - 7, 7, "threads") == 0) value = threads;
        test::expect_correct(g, s, t, std::string(spec).substr(0, 40) + " threads " + std::to_string(threads), 3);
      }
    }
  }
}

}  // namespace
}  // namespace axon
