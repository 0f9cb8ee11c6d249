// Pass parallel_chunks (tile/passes/parallel_chunks.h): IR in, IR out. Only
// the outermost Parallel loops get the chunk; the verifier accepts the
// result and refuses a chunk on a loop that is not Parallel; the values are
// the same; the printer deals the iterations with schedule(static, chunk).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/c_like/tile_cpp.h"
#include "cpu_test_support.h"
#include "tile/interpret.h"
#include "tile/passes/parallel_chunks.h"
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

const char* kSpec =
    "import numpy as np\n\ndef f(X: \"f32[371, 90]\", Y: \"f32[4, 3, 4096]\"):\n"
    "    mu = np.mean(X, axis=-1, keepdims=True)\n"
    "    return (X - mu) / np.sqrt(np.mean((X - mu) ** 2, axis=-1, keepdims=True) + 1e-5), np.exp(Y) * 2.0\n";

// (var, chunk) of every Parallel loop, and whether another encloses it.
struct Par {
  std::string var;
  int64_t chunk;
  bool nested;
};
void parallel_loops(const Stmt& s, bool inside, std::vector<Par>* out) {
  if (s.kind() == StmtKind::For) {
    const bool par = s->loop == LoopKind::Parallel;
    if (par) out->push_back({s->var, s->chunk, inside});
    parallel_loops(s->body.at(0), inside || par, out);
    return;
  }
  if (s.kind() == StmtKind::Seq)
    for (const Stmt& c : s->body) parallel_loops(c, inside, out);
}

TEST(tile_parallel_chunks, OutermostParallelLoopsDealChunks) {
  ir::Graph g = test::parse(kSpec);
  tile::LoopsOptions o;
  o.threads = 2;
  Kernel before = tile::lower_with(g, tile::loops_pipeline(o), "f");
  for (int64_t chunk : {1, 8, 64}) {
    Kernel after = tile::parallel_chunks(before, chunk);
    const std::string what = "chunk " + std::to_string(chunk) + "\n" + tile::print(after);
    EXPECT_EQ(test::problems_text(tile::verify(after)), "") << what;
    std::vector<Par> loops;
    parallel_loops(after.body, false, &loops);
    int outer = 0;
    for (const Par& p : loops) {
      EXPECT_EQ(p.chunk, p.nested ? 0 : chunk) << p.var << ": " << what;
      outer += !p.nested;
    }
    EXPECT_GE(outer, 2) << what;  // the norm's rows and Y's collapsed nest
    EXPECT_NE(tile::print(after).find("chunks of " + std::to_string(chunk)), std::string::npos) << what;
    const ir::Type& tx = g.params[0].type;
    const ir::Type& ty = g.params[1].type;
    std::vector<ir::Tensor> in = {{tx, std::vector<double>(static_cast<size_t>(tx.numel()))},
                                  {ty, std::vector<double>(static_cast<size_t>(ty.numel()))}};
    for (auto& t : in)
      for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
    std::vector<ir::Tensor> a = tile::interpret(before, in), b = tile::interpret(after, in);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].data, b[i].data) << "output " << i;
    codegen::TileCppOptions po;
    po.vector_bits = 256;
    const std::string src = codegen::print_tile_cpp(after, g, "a test kernel", po).source;
    EXPECT_NE(src.find("schedule(static, " + std::to_string(chunk) + ")"), std::string::npos) << src;
    EXPECT_EQ(src.find("schedule(static)"), std::string::npos) << "a parallel loop without its chunk\n" << src;
  }
  EXPECT_EQ(tile::print(tile::parallel_chunks(before, 0)), tile::print(before));
  // On one thread there is no parallel loop to deal.
  Kernel serial = tile::lower_with(g, tile::loops_pipeline(tile::LoopsOptions{}), "f");
  EXPECT_EQ(tile::print(tile::parallel_chunks(serial, 8)), tile::print(serial));
}

TEST(tile_parallel_chunks, VerifierRefusesAChunkOnALoopThatIsNotParallel) {
  ir::Graph g = test::parse(kSpec);
  Kernel k = tile::lower_with(g, tile::loops_pipeline(tile::LoopsOptions{}), "f");
  ASSERT_EQ(k.body.kind(), StmtKind::Seq);
  std::vector<Stmt> body = k.body->body;
  bool edited = false;
  for (Stmt& s : body)
    if (!edited && s.kind() == StmtKind::For) s = s.with([](tile::StmtNode& n) { n.chunk = 4; }), edited = true;
  ASSERT_TRUE(edited);
  k.body = k.body.with([&](tile::StmtNode& n) { n.body = body; });
  EXPECT_NE(test::problems_text(tile::verify(k)).find("a chunk of 4 iterations on a serial loop"), std::string::npos)
      << tile::print(k);
}

// Compiled row stages at every row_block, on a row count that leaves a short
// last chunk, correct on the host and AVX2.
TEST(tile_parallel_chunks, RowStagesAtEveryRowBlockAreCorrect) {
  ir::Graph g = test::parse(
      "import numpy as np\n\ndef f(X: \"f32[371, 90]\"):\n"
      "    mu = np.mean(X, axis=-1, keepdims=True)\n"
      "    return (X - mu) / np.sqrt(np.mean((X - mu) ** 2, axis=-1, keepdims=True) + 1e-5)\n");
  for (const auto& t : test::targets()) {
    schedule::Space sp = schedule::schedule_space(g, t);
    const schedule::Knob* knob = sp.find("k0.row_block");
    if (!knob) {
      ADD_FAILURE() << "no k0.row_block";
      continue;
    }
    for (int64_t rb : knob->values) {
      schedule::Schedule s = schedule::default_schedule(sp);
      s["k0.row_block"] = rb, s["k0.threads"] = 2;
      test::expect_correct(g, s, t, "row_block " + std::to_string(rb) + " at " + std::to_string(t.isa.vector_bits()), 5);
    }
  }
}

}  // namespace
}  // namespace axon
