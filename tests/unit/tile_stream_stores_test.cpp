// Pass stream_stores (tile/passes/stream_stores.h): IR in, IR out. The
// float32 outputs a vector loop writes lane by lane become streaming
// Stores, nothing else does; the program stays well formed and computes the
// same values; the printer streams aligned vectors and fences once per
// thread or once at the end.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "codegen/c_like/tile_cpp.h"
#include "cpu_test_support.h"
#include "tile/interpret.h"
#include "tile/passes/stream_stores.h"
#include "tile/pipeline.h"
#include "tile/print.h"
#include "tile/verify.h"
#include "tile_test_support.h"

namespace axon {
namespace {

using tile::Kernel;
using tile::Stmt;
using tile::StmtKind;

// (buffer name, streaming) of every Store of k, in program order.
std::vector<std::pair<std::string, bool>> stores_of(const Kernel& k) {
  std::vector<std::pair<std::string, bool>> out;
  tile::visit(k.body, [&](const Stmt& s) {
    if (s.kind() == StmtKind::Store) out.push_back({k.buffers[s->buffer].name, s->streaming});
  });
  return out;
}

// softmax of X (a row output written in a vector loop, through row scratch)
// and the row sums of X (an output of one element per row: a scalar Store);
// enough rows for two threads to share them.
const char* kSpec =
    "import numpy as np\n\ndef f(X: \"f32[400, 100]\"):\n"
    "    e = np.exp(X - np.max(X, axis=-1, keepdims=True))\n"
    "    return e / np.sum(e, axis=-1, keepdims=True), np.sum(X, axis=-1)\n";

TEST(tile_stream_stores, RowOutputsOfVectorLoopsStreamAndNothingElse) {
  ir::Graph g = test::parse(kSpec);
  for (int threads : {1, 2}) {
    tile::LoopsOptions o;
    o.threads = threads;
    Kernel before = tile::lower_with(g, tile::loops_pipeline(o), "f");
    Kernel after = tile::stream_stores(before);
    const std::string what = std::to_string(threads) + " thread(s)\n" + tile::print(after);
    EXPECT_EQ(test::problems_text(tile::verify(after)), "") << what;
    int streamed = 0, plain_outputs = 0;
    for (const auto& [name, streaming] : stores_of(after)) {
      if (streaming) {
        ++streamed;
        EXPECT_EQ(name, "out0") << what;  // the softmax; never scratch, never the row sums
      } else if (name == "out0") {
        ADD_FAILURE() << "a store of the softmax outside a vector loop or not streamed\n" << what;
      }
      plain_outputs += !streaming && name == "out1";
    }
    EXPECT_GE(streamed, 1) << what;
    EXPECT_EQ(plain_outputs, 1) << what;
    EXPECT_NE(tile::print(after).find("(streaming)"), std::string::npos);
    EXPECT_EQ(tile::print(before).find("(streaming)"), std::string::npos);
    std::vector<ir::Tensor> in = test::graph_inputs(g, 3);
    std::vector<ir::Tensor> a = tile::interpret(before, in), b = tile::interpret(after, in);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].data, b[i].data) << "output " << i;
    // Twice is once.
    EXPECT_EQ(tile::print(tile::stream_stores(after)), tile::print(after));
  }
}

TEST(tile_stream_stores, WithoutVectorLoopsNothingStreams) {
  ir::Graph g = test::parse(kSpec);
  tile::LoopsOptions o;
  o.vectorize = false;
  Kernel before = tile::lower_with(g, tile::loops_pipeline(o), "f");
  EXPECT_EQ(tile::print(tile::stream_stores(before)), tile::print(before));
  // Values kept in memory between nests (inline_maps off) are no outputs:
  // their vector stores stay plain, and so do float64 outputs.
  o = tile::LoopsOptions{};
  o.inline_maps = false;
  Kernel stored = tile::stream_stores(tile::lower_with(g, tile::loops_pipeline(o), "f"));
  int memory_stores = 0;
  for (const auto& [name, streaming] : stores_of(stored)) {
    if (name != "out0") EXPECT_FALSE(streaming) << name << "\n" << tile::print(stored);
    memory_stores += name != "out0" && name != "out1";
  }
  EXPECT_GT(memory_stores, 0) << tile::print(stored);
  ir::Graph d = test::parse("import numpy as np\n\ndef f(X: \"f64[8, 64]\"):\n    return np.exp(X) * 2.0\n");
  Kernel dk = tile::lower_with(d, tile::loops_pipeline(tile::LoopsOptions{}), "f");
  EXPECT_EQ(tile::print(tile::stream_stores(dk)), tile::print(dk));
}

// Printed: aligned vectors streamed (a row of 100 floats starts on a vector
// boundary only every few rows, so both branches run), one fence per
// thread inside the parallel region after a `nowait` loop, or one at the
// end of a kernel on one thread; the compiled kernel gives the
// interpreter's values within float rounding.
TEST(tile_stream_stores, PrintedStreamsAreFencedOncePerThread) {
  ir::Graph g = test::parse(kSpec);
  for (int bits : {256, 512}) {
    if (bits == 512 && test::host().isa.vector_bits() < 512) continue;
    for (int threads : {1, 2}) {
      tile::LoopsOptions o;
      o.threads = threads;
      o.stream_stores = true;
      Kernel k = tile::lower_with(g, tile::loops_pipeline(o), "f");
      codegen::TileCppOptions po;
      po.vector_bits = bits;
      const std::string src = codegen::print_tile_cpp(k, g, "a test kernel", po).source;
      const std::string what = std::to_string(bits) + "-bit, " + std::to_string(threads) + " thread(s)";
      EXPECT_NE(src.find(bits == 512 ? "_mm512_stream_ps" : "_mm256_stream_ps"), std::string::npos) << what;
      const size_t first = src.find("_mm_sfence();");
      ASSERT_NE(first, std::string::npos) << what;
      EXPECT_EQ(src.find("_mm_sfence();", first + 1), std::string::npos) << what << ": more than one fence\n" << src;
      EXPECT_GT(first, src.rfind("axon_tv_stream(&")) << what;
      EXPECT_EQ(src.find("nowait") != std::string::npos, threads > 1) << what;
      // After the fence: the end of the parallel region (with threads), then of the function.
      EXPECT_EQ(src.substr(src.find('\n', first)), threads > 1 ? "\n  }\n}\n" : "\n}\n") << what << "\n" << src;
    }
  }
  for (const auto& t : test::targets())
    for (int64_t threads : {1, 2}) {
      schedule::Schedule s = schedule::default_schedule(schedule::schedule_space(g, t));
      s["k0.nt_store"] = 1, s["k0.threads"] = threads;
      test::expect_correct(g, s, t, "nt_store at " + std::to_string(t.isa.vector_bits()) + " bits", 7);
    }
}

}  // namespace
}  // namespace axon
