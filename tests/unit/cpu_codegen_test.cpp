// The optimising CPU code generator (codegen/cpu, loop/, schedule/): row
// stages (tile programs of the loops pipeline) compiled for the host and for
// restrict_to_avx2(host), on the
// memory-bound workloads and on small graphs with odd row lengths, for the
// default schedule and random legal ones, judged against the interpreter
// under the error budget; plus the space, legality and flag contracts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "backend/cpu_stages.h"
#include "codegen/c_like/naive_cpp.h"
#include "codegen/c_like/tile_cpp.h"
#include "codegen/cpu/stage_knobs.h"
#include "codegen/cpu/emit_cpu.h"
#include "cpu_test_support.h"
#include "loop/row_kernel.h"
#include "runtime/compile_shared.h"
#include "runtime/loaded_kernel.h"
#include "verify/error_budget.h"
#include "verify/inputs.h"
#include "verify/kernel_io.h"
#include "runtime/run_check.h"
#include "tile/pipeline.h"
#include "tile/passes/cascade_sums.h"
#include "tile/print.h"

namespace axon {
namespace {

using test::host;
using test::load_workload;
using test::parse;
using test::targets;

void expect_correct(const ir::Graph& g, const schedule::Schedule& s, const target::Target& t, const std::string& what) {
  test::expect_correct(g, s, t, what, 7);
}

schedule::Schedule random_schedule(const schedule::Space& sp, std::mt19937& rng) {
  schedule::Schedule s;
  for (const auto& k : sp.knobs) s[k.name] = k.values[rng() % k.values.size()];
  return s;
}

const char* kFused[] = {"s2_softmax", "s3_layernorm", "s4_rmsnorm", "s5_gelu", "s6_silu", "s7_rowsum", "m10_add_layernorm"};

TEST(cpu_codegen, memoryBoundWorkloadsAreOneFusedRowKernel) {
  for (const char* w : kFused) {
    loop::RowKernel k = loop::plan_row_kernel(load_workload(w));
    EXPECT_TRUE(k.ok) << w << ": " << k.why;
  }
  EXPECT_EQ(loop::plan_row_kernel(load_workload("s3_layernorm")).passes(), 3);  // mean, variance, output
  EXPECT_EQ(loop::plan_row_kernel(load_workload("s2_softmax")).passes(), 3);    // max, sum, output
}

TEST(cpu_codegen, fusedWorkloadsAreCorrectOnHostAndAvx2) {
  for (const char* w : kFused) {
    ir::Graph g = load_workload(w);
    for (const auto& t : targets()) {
      schedule::Space sp = schedule::schedule_space(g, t);
      expect_correct(g, schedule::default_schedule(sp), t, std::string(w) + " default, " + std::to_string(t.isa.vector_bits()));
    }
  }
}

// Programs no specialised generator takes get the tile IR's loops kernel,
// with its own knobs, correct at every point of that space.
TEST(cpu_codegen, unfusableWorkloadsGetTheLoopsKernel) {
  for (const char* w : {"def f(X: \"f32[6, 9]\"):\n    return np.concatenate([X, X[::2]], axis=0)\n",
                        "def f(X: \"f32[6, 9]\"):\n    return X[1:4, ::3]\n",
                        "def f(X: \"f32[4, 8, 16, 16]\"):\n"
                        "    return X / np.sqrt(np.mean(X * X, axis=1, keepdims=True) + 1e-5)\n"}) {
    ir::Graph g = parse(std::string("import numpy as np\n\n") + w);
    schedule::Space sp = schedule::schedule_space(g, host());
    ASSERT_NE(sp.find("k0.loops.threads"), nullptr) << w;
    ASSERT_NE(sp.find("k0.loops.inline"), nullptr) << w;
    EXPECT_NE(backend::emit_cpu(g, schedule::default_schedule(sp), host()).source, codegen::emit_naive_cpp(g).source) << w;
    ASSERT_NE(sp.find("k0.loops.split"), nullptr) << w;
    ASSERT_NE(sp.find("k0.loops.nt_store"), nullptr) << w;
    for (int64_t threads : sp.find("k0.loops.threads")->values)
      for (int64_t inl : {0, 1})
        for (int64_t vec : {0, 1})
          for (int64_t split : {0, 1})
            for (int64_t nt : {0, 1}) {
              schedule::Schedule s = {{"k0.loops.threads", threads}, {"k0.loops.inline", inl},
                                      {"k0.loops.vectorize", vec}, {"k0.loops.split", split},
                                      {"k0.loops.nt_store", nt}};
              // Split or not is the same kernel on one thread, and streamed
              // stores or not without vectors: split 0 and nt_store 1 are
              // refused there.
              if ((threads == 1 && split == 0) || (vec == 0 && nt == 1)) {
                EXPECT_NE(schedule::why_illegal(g, s, host()), "");
                continue;
              }
              EXPECT_EQ(schedule::why_illegal(g, s, host()), "");
              expect_correct(g, s, host(), std::string(w) + " " + schedule::to_json(s).dump());
            }
  }
}

// The loops kernels' cost ranks a reduction over axis 0 split across two
// threads (per-lane partials, chunks of rows) ahead of both the columns on
// two threads (each column's sum a strided walk) and one thread; a whole
// tensor's max likewise; a row sum gains nothing from split.
TEST(cpu_codegen, loopsCostPrefersSplitReductions) {
  const target::Target t = host();
  if (t.cores < 2) GTEST_SKIP() << "one core";
  auto cost = [&](const ir::Graph& g, int threads, int split) {
    schedule::Schedule s = {{"k0.loops.threads", threads}, {"k0.loops.inline", 1}, {"k0.loops.vectorize", 1},
                            {"k0.loops.split", split}};
    return schedule::predicted_seconds(g, s, t);
  };
  ir::Graph cols = parse("import numpy as np\n\ndef f(X: \"f32[8192, 1024]\"):\n    return np.mean(X, axis=0)\n");
  EXPECT_LT(cost(cols, 2, 1), cost(cols, 2, 0));
  EXPECT_LT(cost(cols, 2, 1), cost(cols, 1, 1));
  ir::Graph whole = parse("import numpy as np\n\ndef f(X: \"f32[1024, 1024]\"):\n    return np.max(X) + np.min(X)\n");
  EXPECT_LT(cost(whole, 2, 1), cost(whole, 2, 0));
  ir::Graph rows = parse("import numpy as np\n\ndef f(X: \"f32[4096, 1024]\"):\n    return np.sum(X * X, axis=1)[::2]\n");
  ASSERT_NE(schedule::schedule_space(rows, t).find("k0.loops.split"), nullptr);
  EXPECT_EQ(cost(rows, 2, 1), cost(rows, 2, 0));
}

// Odd row lengths: tails of 1 (17, 49), 7 (7, 23) and 17 (49 on AVX2: 6 vectors + 1) elements,
// and rows shorter than a vector.
TEST(cpu_codegen, oddSizesWithRandomSchedules) {
  const char* bodies[] = {
      "    m = np.max(X, axis=-1, keepdims=True)\n    e = np.exp(X - m)\n    return e / np.sum(e, axis=-1, keepdims=True)\n",
      "    mu = np.mean(X, axis=-1, keepdims=True)\n    var = np.mean((X - mu) ** 2, axis=-1, keepdims=True)\n"
      "    return (X - mu) / np.sqrt(var + 1e-5) * g + g\n",
      "    return np.maximum(X, 0.0) * g - np.minimum(X * 2.0, 1.0), np.sum(X * X, axis=-1)\n",
      "    return np.where(X > 0.5, np.tanh(X), X / (1.0 + np.exp(-X))) + np.min(X, axis=-1, keepdims=True)\n",
  };
  std::mt19937 rng(11);
  for (int cols : {7, 17, 23, 49, 70, 150}) {
    for (const char* b : bodies) {
      std::string src = "import numpy as np\n\ndef f(X: \"f32[5, " + std::to_string(cols) + "]\", g: \"f32[" +
                        std::to_string(cols) + "]\"):\n" + b;
      ir::Graph g = parse(src);
      loop::RowKernel k = loop::plan_row_kernel(g);
      ASSERT_TRUE(k.ok) << src << k.why;
      for (const auto& t : targets()) {
        schedule::Space sp = schedule::schedule_space(g, t);
        for (int rep = 0; rep < 2; ++rep) {
          schedule::Schedule s = rep == 0 ? schedule::default_schedule(sp) : random_schedule(sp, rng);
          expect_correct(g, s, t, src + " at " + std::to_string(t.isa.vector_bits()) + " " + schedule::to_json(s).dump());
        }
      }
    }
  }
}

// Long rows: 8205 = 2 * 64 * 64 + 13 and 266261 = 65 * 64^2 + 21 columns.
// The innermost loop of every sum adds at most 64 terms into each lane of
// each accumulator chain (blocks of 64 x lanes x chains), every loop over
// blocks at most 64 partials; correct for every thread count, AVX2 and
// AVX-512.
TEST(cpu_codegen, tileRowSumsAreBlockedAndCorrect) {
  for (int cols : {8205, 266261}) {
    const std::string src = "import numpy as np\n\ndef f(X: \"f32[3, " + std::to_string(cols) +
                            "]\"):\n    s = np.sum(X + 3.0, axis=-1, keepdims=True)\n"
                            "    return X / s, np.sum(X * X, axis=-1), np.max(X, axis=-1)\n";
    ir::Graph g = parse(src);
    for (const auto& t : targets()) {
      const int64_t partials = t.isa.vector_bits() / 32 * codegen::kVectorChains;
      schedule::Space sp = schedule::schedule_space(g, t);
      for (int64_t threads : sp.find("k0.threads")->values) {
        schedule::Schedule s = schedule::default_schedule(sp);
        s["k0.threads"] = threads;
        const std::string what = "f32[3, " + std::to_string(cols) + "] at " + std::to_string(t.isa.vector_bits()) +
                                 " " + schedule::to_json(s).dump();
        tile::Kernel k = tile::lower_with(g, tile::loops_pipeline(codegen::row_stage_loops_options(s, t, "k0.")), "f");
        int sums = 0;
        std::function<void(const tile::Stmt&, bool)> walk = [&](const tile::Stmt& x, bool innermost_sum) {
          if (x.kind() != tile::StmtKind::For) {
            if (x.kind() == tile::StmtKind::Seq)
              for (const tile::Stmt& c : x->body) walk(c, false);
            return;
          }
          bool inner_loop = false, sum = false;
          tile::visit(x->body.at(0), [&](const tile::Stmt& y) {
            inner_loop |= y.kind() == tile::StmtKind::For;
            sum |= y.kind() == tile::StmtKind::Accumulate && y->combine == ir::Combine::Sum;
          });
          if (sum) {
            ++sums;
            ASSERT_TRUE(x->extent.is_const()) << what;
            EXPECT_LE(x->extent.value(), inner_loop ? tile::kCascadeBlock : tile::kCascadeBlock * partials)
                << what << ": loop " << x->var << "\n" << tile::print(k);
          }
          walk(x->body.at(0), false);
        };
        walk(k.body, false);
        EXPECT_GT(sums, 0) << what;
        const std::string text = backend::emit_cpu(g, s, t).source;
        EXPECT_NE(text.find("accumulator chains"), std::string::npos) << what;
        expect_correct(g, s, t, what);
      }
    }
  }
}

// A NaN anywhere in a row makes its max, min and softmax NaN, wherever the
// NaN falls: in the four-chain loop, the one-vector loop or the tail (the
// vector max keeps its accumulator on NaN, so the emitter tracks NaN lanes).
TEST(cpu_codegen, rowMaxAndMinPropagateNaNFromEveryPosition) {
  const int cols = 150;
  ir::Graph g = parse(
      "import numpy as np\n\ndef f(X: \"f32[8, 150]\"):\n"
      "    m = np.max(X, axis=-1, keepdims=True)\n    e = np.exp(X - m)\n"
      "    return e / np.sum(e, axis=-1, keepdims=True), np.min(X, axis=-1)\n");
  for (const auto& t : targets())
  // The vector max runs on accumulator chains: 150 columns are two steps of
  // 4 chains, one or two single vectors and a scalar tail; with and without
  // the prefetches (past the last rows' ends), on one and two threads.
  for (int64_t ahead : {0, 4096})
  for (int64_t threads : {1, 2}) {
    schedule::Space sp = schedule::schedule_space(g, t);
    schedule::Schedule s = schedule::default_schedule(sp);
    s["k0.threads"] = threads;
    if (s.count("k0.stream_prefetch")) s["k0.stream_prefetch"] = ahead;
    codegen::KernelSource k = backend::emit_cpu(g, s, t);
    runtime::CompileOptions co;
    co.flags = codegen::cpu_compile_flags(t, true);
    runtime::LoadedKernel kernel(runtime::compile_shared(k, co), k.entry);
    std::vector<ir::Tensor> in = verify::random_inputs(g, 5);
    const int nan_at[8] = {-1, 0, 17, 63, 64, 100, 130, 149};  // row 0 has none
    for (int r = 0; r < 8; ++r)
      if (nan_at[r] >= 0) in[0].data[r * cols + nan_at[r]] = std::nan("");
    std::vector<ir::Tensor> ref = verify::interpret(g, in);
    runtime::KernelBuffers b = runtime::make_buffers(g, in);
    kernel.call(b.pointers());
    for (size_t o = 0; o < 2; ++o) {
      const ir::Type& ty = g[g.outputs[o]].type;
      std::vector<double> got = verify::from_buffer(b.storage[1 + o].data(), ty.numel(), ty.dtype);
      const int64_t per_row = ty.numel() / 8;
      for (int r = 0; r < 8; ++r)
        for (int64_t c = 0; c < per_row; ++c) {
          const double want = ref[o].data[r * per_row + c], have = got[r * per_row + c];
          ASSERT_EQ(std::isnan(want), r > 0) << "the reference, row " << r;
          if (r > 0) ASSERT_TRUE(std::isnan(have)) << t.isa.vector_bits() << "-bit, output " << o << ", NaN at column "
                                                    << nan_at[r] << ", element " << c << " is " << have;
          else ASSERT_NEAR(have, want, 1e-5) << "row 0, output " << o << ", element " << c;
        }
    }
  }
}

// The tile program's vector max and min (the hardware instruction, NaN
// lanes tracked apart) name their element axon_x: a parameter named x is
// still read, not the element being declared.
TEST(cpu_codegen, tileVectorMaxOfAParameterNamedX) {
  ir::Graph g = parse("import numpy as np\n\ndef f(x: \"f32[6, 150]\"):\n"
                      "    return np.max(x, axis=-1), np.min(x * 2.0, axis=-1)\n");
  for (const auto& t : targets()) {
    schedule::Schedule s = schedule::default_schedule(schedule::schedule_space(g, t));
    const std::string src = backend::emit_cpu(g, s, t).source;
    EXPECT_NE(src.find("AXON_TV_MAX(axon_x"), std::string::npos);
    EXPECT_NE(src.find("AXON_TV_MIN(axon_x"), std::string::npos);
    expect_correct(g, s, t, "max and min of x, " + std::to_string(t.isa.vector_bits()) + "-bit");
  }
}

TEST(cpu_codegen, randomSchedulesOfAWorkload) {
  ir::Graph g = load_workload("m10_add_layernorm");
  std::mt19937 rng(3);
  for (const auto& t : targets()) {
    schedule::Space sp = schedule::schedule_space(g, t);
    for (int rep = 0; rep < 2; ++rep) {
      schedule::Schedule s = random_schedule(sp, rng);
      expect_correct(g, s, t, "m10 " + schedule::to_json(s).dump());
      EXPECT_GT(schedule::predicted_seconds(g, s, t), 0);
    }
  }
}

// A product narrower than a vector (N = 5 or 8 at 16 lanes, 5 at 8) runs
// on a register tile a vector wide over its zero-padded B panel, merged as
// an edge tile, not on the scalar form (20 times slower for [512, 512] x
// [512, 8] on one AVX-512 core); correct on the host and AVX2.
TEST(cpu_codegen, thinProductsUseTheRegisterTile) {
  for (int n : {5, 8}) {
    ir::Graph g = parse("import numpy as np\n\ndef f(A: \"f32[70, 96]\", D: \"f32[96, " + std::to_string(n) +
                        "]\"):\n    return A @ D\n");
    for (const auto& t : targets()) {
      const schedule::Schedule s = schedule::default_schedule(schedule::schedule_space(g, t));
      ASSERT_EQ(s.count("k0.gemm.pack_b"), 1u) << "not a GEMM stage";
      const std::string src = backend::emit_cpu(g, s, t).source;
      EXPECT_NE(src.find(" register tile"), std::string::npos) << "N " << n << "\n" << src;
      test::expect_correct(g, s, t, "N " + std::to_string(n) + " at " + std::to_string(t.isa.vector_bits()), 3);
    }
  }
}

TEST(cpu_codegen, avx2TargetGetsNoAvx512) {
  target::Target t = target::restrict_to_avx2(host());
  ir::Graph g = load_workload("s2_softmax");
  std::string src = backend::emit_cpu(g, schedule::default_schedule(schedule::schedule_space(g, t)), t).source;
  EXPECT_EQ(src.find("_mm512"), std::string::npos);
  EXPECT_EQ(src.find("__m512"), std::string::npos);
  std::vector<std::string> f = codegen::cpu_compile_flags(t, false);
  EXPECT_EQ(std::count(f.begin(), f.end(), "-march=native"), 0);
  EXPECT_EQ(std::count(f.begin(), f.end(), "-mavx512f"), 0);
  EXPECT_EQ(std::count(f.begin(), f.end(), "-mavx2"), 1);
}

// Streaming stores (knob nt_store: tile/passes/stream_stores.h) are fenced
// once per thread after its last row, not after every row (each fence
// waited for the write-combining buffers to drain), and inside the parallel
// region, so every thread fences its own stores; rows dealt in chunks
// (row_block) too.
TEST(cpu_codegen, streamedRowsAreFencedOncePerThreadAfterTheLoop) {
  ir::Graph g = load_workload("s2_softmax");
  schedule::Schedule s = schedule::default_schedule(schedule::schedule_space(g, host()));
  for (int threads : {1, 2})
    for (int block : {0, 8}) {
      s["k0.nt_store"] = 1, s["k0.threads"] = threads, s["k0.row_block"] = block;
      ASSERT_EQ(schedule::why_illegal(g, s, host()), "");
      std::string src = backend::emit_cpu(g, s, host()).source;
      std::string what = std::to_string(threads) + " threads, row block " + std::to_string(block);
      size_t fence = src.find("_mm_sfence();");
      ASSERT_NE(fence, std::string::npos) << what;
      EXPECT_EQ(src.find("_mm_sfence();", fence + 1), std::string::npos) << what << ": more than one fence";
      EXPECT_NE(src.find(host().isa.vector_bits() == 512 ? "_mm512_stream_ps" : "_mm256_stream_ps"), std::string::npos) << what;
      size_t last_stream = src.rfind("_stream");
      ASSERT_NE(last_stream, std::string::npos) << what << ": no streaming store";
      EXPECT_EQ(src.find("schedule(static, 8)") != std::string::npos, threads > 1 && block == 8) << what;
      EXPECT_GT(fence, last_stream) << what;
      // After the fence: the end of the parallel region (with threads), then of the function.
      EXPECT_EQ(src.substr(src.find('\n', fence)), threads > 1 ? "\n  }\n}\n" : "\n}\n") << what;
      if (threads > 1) {
        EXPECT_NE(src.find("nowait"), std::string::npos) << what;
      }
      expect_correct(g, s, host(), what);
    }
}

// exp(c * v) with c one scalar per call or per row is a power of two
// (exp2_scaled): the scales -1.5 and the row max times log2(e) in float64,
// each rounded once into a register before its vector loop; exp(-X) is not
// a product and keeps exp. Within the budget on the host and AVX2, vector
// loops and tails.
TEST(cpu_codegen, tileExpOfAScaledValueIsExp2WithTheScaleFolded) {
  ir::Graph g = parse(
      "import numpy as np\n\ndef f(X: \"f32[5, 49]\"):\n"
      "    return np.exp(X * -1.5) + np.exp(X * np.max(X, axis=-1, keepdims=True)), np.exp(-X)\n");
  for (const auto& t : targets())
    for (int64_t unroll : {1, 2}) {
      schedule::Schedule s = schedule::default_schedule(schedule::schedule_space(g, t));
      s["k0.unroll"] = unroll;
      const std::string src = backend::emit_cpu(g, s, t).source;
      const std::string what = std::to_string(t.isa.vector_bits()) + "-bit, unroll " + std::to_string(unroll);
      const std::string body = src.substr(src.find("extern \"C\" void f("));
      size_t folded = 0, scales = 0;
      for (size_t at = body.find("axon_vexp2("); at != std::string::npos; at = body.find("axon_vexp2(", at + 1)) ++folded;
      for (size_t at = body.find("* 1.4426950408889634)"); at != std::string::npos; at = body.find("* 1.4426950408889634)", at + 1))
        ++scales;
      EXPECT_GE(folded, 2u) << what << body;
      EXPECT_GE(scales, 2u) << what << body;
      EXPECT_NE(body.find("axon_vexp((-"), std::string::npos) << what << ": exp(-X) keeps exp\n" << body;
      expect_correct(g, s, t, "exp of scaled values as a tile program, " + what);
    }
}

// The non-temporal prefetch (stream_prefetch: tile/passes/prefetch_rows.h,
// which tile_prefetch_rows checks loop by loop) is printed for every row
// input and no per-column one, never in scalar code; and the kernels stay
// correct with the prefetches running past the inputs' ends.
TEST(cpu_codegen, nonTemporalPrefetchOfRowInputsOnly) {
  struct Case {
    const char* body;
    std::vector<std::string> row_inputs, other_inputs;
  } cases[] = {
      {"def f(X: \"f32[13, 150]\"):\n    m = np.max(X, axis=-1, keepdims=True)\n    e = np.exp(X - m)\n"
       "    return e / np.sum(e, axis=-1, keepdims=True)\n",
       {"X"}, {}},
      {"def f(X: \"f32[11, 37]\"):\n    return np.sum(X, axis=-1)\n", {"X"}, {}},
      {"def f(X: \"f32[9, 70]\", Y: \"f32[9, 70]\", g: \"f32[70]\"):\n    return X * g + Y\n", {"X", "Y"}, {"g"}},
  };
  for (const Case& cs : cases) {
    ir::Graph g = parse(std::string("import numpy as np\n\n") + cs.body);
    for (const auto& t : targets()) {
      schedule::Space sp = schedule::schedule_space(g, t);
      const schedule::Knob* knob = sp.find("k0.stream_prefetch");
      ASSERT_NE(knob, nullptr) << cs.body;
      EXPECT_EQ(knob->values.front(), 0) << "the default point prefetches nothing";
      for (int64_t vec : {1, 0})
        for (int64_t ahead : {int64_t{0}, knob->values.back()}) {
          schedule::Schedule s = schedule::default_schedule(sp);
          s["k0.vec_axis"] = vec, s["k0.stream_prefetch"] = ahead;
          const std::string what = std::string(cs.body) + " at " + std::to_string(t.isa.vector_bits()) + " " +
                                   schedule::to_json(s).dump();
          const std::string text = backend::emit_cpu(g, s, t).source;
          const bool expected = vec == 1 && ahead > 0;
          const std::string fetch = "__builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(&";
          EXPECT_EQ(text.find(fetch) != std::string::npos, expected) << what << text;
          for (const std::string& in : cs.row_inputs)
            EXPECT_EQ(text.find(fetch + in + "[") != std::string::npos, expected) << what << ": input " << in << text;
          for (const std::string& in : cs.other_inputs)
            EXPECT_EQ(text.find(fetch + in + "["), std::string::npos) << what << ": input " << in << text;
          if (expected) EXPECT_NE(text.find(") + " + std::to_string(ahead) + "), 0, 0);"), std::string::npos) << what << text;
          expect_correct(g, s, t, what);
        }
    }
  }
}

// The output pass's unroll is a tuple step whose vector math runs on all its
// vectors at once, with one branch for exp's fast path. Every lane still
// gets the instructions of one vector at a time, so unroll 1, 2 and 4 give
// the same bits, also where a vector with a lane past the fast path's range
// (|x| > 86: x^5 for |x| > 2.44) sends its whole tuple down the general path.
TEST(cpu_codegen, tupleStepsGiveTheBitsOfOneVectorAtATime) {
  ir::Graph g = parse(
      "import numpy as np\n\ndef f(X: \"f32[7, 203]\", Y: \"f32[7, 203]\"):\n"
      "    return np.exp(-(X * X * X * X * X)), X / (1.0 + np.exp(-X)), np.tanh(X) * np.exp(Y * 0.5), "
      "np.where(X > Y, np.log(X * X), np.sqrt(Y * Y))\n");
  for (const auto& t : targets()) {
    std::vector<std::vector<double>> first;
    for (int unroll : {1, 2, 4}) {
      schedule::Schedule s = schedule::default_schedule(schedule::schedule_space(g, t));
      s["k0.unroll"] = unroll;
      s["k0.threads"] = 1;
      const std::string what = std::to_string(t.isa.vector_bits()) + "-bit, unroll " + std::to_string(unroll);
      ASSERT_EQ(schedule::why_illegal(g, s, t), "") << what;
      codegen::KernelSource k = backend::emit_cpu(g, s, t);
      EXPECT_NE(k.source.find("axon_vexp("), std::string::npos) << what;
      EXPECT_EQ(k.source.find("axon_tt_load<") != std::string::npos, unroll > 1) << what;
      runtime::CompileOptions co;
      co.flags = codegen::cpu_compile_flags(t, true);
      runtime::LoadedKernel kernel(runtime::compile_shared(k, co), k.entry);
      runtime::RunCheck r = runtime::run_and_check(g, kernel, 11);
      ASSERT_EQ(r.outputs.size(), 4u);
      int64_t wide = 0;  // elements whose exp argument is past the fast path
      for (double x : r.inputs[0].data)
        wide += std::fabs(x * x * x * x * x) > 86;
      EXPECT_GT(wide, 0) << what << ": no input exercises the general path";
      for (size_t o = 0; o < r.outputs.size(); ++o) {
        EXPECT_TRUE(r.outputs[o].cmp.ok()) << what << " output " << o;
        if (unroll == 1) continue;
        const auto& a = first[o];
        const auto& b = r.outputs[o].got;
        ASSERT_EQ(a.size(), b.size());
        int64_t differ = 0;
        for (size_t i = 0; i < a.size(); ++i) differ += std::memcmp(&a[i], &b[i], sizeof(double)) != 0;
        EXPECT_EQ(differ, 0) << what << " output " << o << ": elements whose bits differ from unroll 1";
      }
      if (unroll == 1)
        for (const auto& out : r.outputs) first.push_back(out.got);
    }
  }
}

// A kernel rounds every operation of the spec, as numpy does: X * Y + Z is
// a product rounded to float32 and then a sum, never one fused
// multiply-add that the C++ compiler chose on its own (GCC fuses by
// default, -ffp-contract=fast). Inputs with Z near -X * Y, where the two
// differ in most elements.
TEST(cpu_codegen, kernelsRoundEachOperationAsTheSpecWritesIt) {
  ASSERT_TRUE(test::kGompPinned);
  ir::Graph g = parse("import numpy as np\n\ndef f(X: \"f32[4, 1000]\", Y: \"f32[4, 1000]\", Z: \"f32[4, 1000]\"):\n"
                      "    return X * Y + Z\n");
  const size_t n = 4000;
  std::vector<float> x(n), y(n), z(n), want(n);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(1.0f, 2.0f);
  size_t fused_differs = 0;
  for (size_t i = 0; i < n; ++i) {
    x[i] = u(rng), y[i] = u(rng);
    volatile float p = x[i] * y[i];  // volatile: rounded to float, whatever this file's flags
    z[i] = -p * 1.0000001f;
    want[i] = p + z[i];
    fused_differs += std::fma(x[i], y[i], z[i]) != want[i];
  }
  ASSERT_GT(fused_differs, n / 2) << "the inputs do not tell a fused multiply-add apart";
  for (const auto& t : targets())
    for (int unroll : {1, 4}) {
      schedule::Schedule s = schedule::default_schedule(schedule::schedule_space(g, t));
      s["k0.unroll"] = unroll;
      const std::string what = std::to_string(t.isa.vector_bits()) + "-bit, unroll " + std::to_string(unroll);
      codegen::KernelSource k = backend::emit_cpu(g, s, t);
      runtime::CompileOptions co;
      co.flags = codegen::cpu_compile_flags(t, true);
      runtime::LoadedKernel kernel(runtime::compile_shared(k, co), k.entry);
      std::vector<float> out(n);
      kernel.call({x.data(), y.data(), z.data(), out.data()});
      size_t differ = 0, where = 0;
      for (size_t i = 0; i < n; ++i)
        if (std::memcmp(&out[i], &want[i], sizeof(float)) != 0) ++differ, where = i;
      EXPECT_EQ(differ, 0u) << what << ": e.g. element " << where << " is " << std::hexfloat << out[where]
                            << ", rounding each operation gives " << want[where];
    }
}

// AVX-512 kernels compile on any host (g++ needs only the flags), so a host
// without AVX-512 still checks that their vector loops type-check:
// reductions on accumulator chains (max, sum), bool inputs, exp's and
// exp2's tuples, streaming stores, for unroll 1, 2 and 4. A host with
// AVX-512 also runs them against the budget.
TEST(cpu_codegen, avx512KernelsCompileOnEveryHost) {
  ir::Graph g = parse(
      "import numpy as np\n\ndef f(X: \"f32[9, 203]\", B: \"bool[9, 203]\"):\n"
      "    e = np.exp(X - np.max(X, axis=-1, keepdims=True))\n"
      "    return e / np.sum(e, axis=-1, keepdims=True), "
      "np.where(B, np.tanh(X) * np.exp(X * 0.5), np.sqrt(X * X) + np.log(X * X))\n");
  target::Target t = host();
  t.isa.avx512f = t.isa.avx512bw = t.isa.avx512vl = t.isa.avx512dq = true;
  ASSERT_EQ(t.isa.vector_bits(), 512);
  const bool runs = host().isa.vector_bits() == 512;
  for (int unroll : {1, 2, 4}) {
    schedule::Schedule s = schedule::default_schedule(schedule::schedule_space(g, t));
    s["k0.unroll"] = unroll;
    s["k0.nt_store"] = unroll == 2;
    const std::string what = "AVX-512 tile program, unroll " + std::to_string(unroll);
    codegen::KernelSource k = backend::emit_cpu(g, s, t);
    EXPECT_NE(k.source.find("_mm512_"), std::string::npos) << what;
    EXPECT_EQ(k.source.find("axon_tt_load<") != std::string::npos, unroll > 1) << what;
    runtime::CompileOptions co;
    co.flags = codegen::cpu_compile_flags(t, true);
    std::string so;
    EXPECT_NO_THROW(so = runtime::compile_shared(k, co)) << what;
    if (runs && !so.empty()) test::expect_correct(g, s, t, what, 3);
  }
}

TEST(cpu_codegen, whyIllegalNamesTheKnob) {
  ir::Graph g = load_workload("s4_rmsnorm");
  schedule::Space sp = schedule::schedule_space(g, host());
  schedule::Schedule s = schedule::default_schedule(sp);
  EXPECT_EQ(schedule::why_illegal(g, s, host()), "");
  s["k0.unroll"] = 3;
  EXPECT_NE(schedule::why_illegal(g, s, host()).find("k0.unroll"), std::string::npos);
  s = schedule::default_schedule(sp);
  s["k9.bogus"] = 1;
  EXPECT_NE(schedule::why_illegal(g, s, host()).find("k9.bogus"), std::string::npos);
}

// why_illegal and predicted_seconds keep the last graph's partition and
// space per thread: asked of two graphs and two targets in turn, each
// answer is the one of its own graph and target.
TEST(cpu_codegen, legalityAndPredictionsFollowTheGraphAndTargetAsked) {
  const ir::Graph row = load_workload("s4_rmsnorm"), mm = load_workload("s1_matmul");
  const target::Target wide = host(), narrow = target::restrict_to_avx2(host());
  const schedule::Schedule row_s = schedule::default_schedule(schedule::schedule_space(row, wide));
  schedule::Schedule mm_wide = schedule::default_schedule(schedule::schedule_space(mm, wide));
  const double row_p = schedule::predicted_seconds(row, row_s, wide), mm_p = schedule::predicted_seconds(mm, mm_wide, wide);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(schedule::why_illegal(row, row_s, wide), "");
    EXPECT_NE(schedule::why_illegal(mm, row_s, wide), "");
    EXPECT_EQ(schedule::why_illegal(mm, mm_wide, wide), "");
    EXPECT_NE(schedule::why_illegal(row, mm_wide, wide), "");
    EXPECT_EQ(schedule::predicted_seconds(row, row_s, wide), row_p);
    EXPECT_EQ(schedule::predicted_seconds(mm, mm_wide, wide), mm_p);
    if (wide.isa.vector_bits() == 512) {  // a 64-column register tile: 4 vectors of 16 lanes, more than AVX2's 4 x 8
      schedule::Schedule s = mm_wide;
      for (auto& [name, v] : s)
        if (name.size() > 3 && name.compare(name.size() - 3, 3, ".nr") == 0) v = 64;
      EXPECT_EQ(schedule::why_illegal(mm, s, wide), "");
      EXPECT_NE(schedule::why_illegal(mm, s, narrow), "");
    }
  }
}

}  // namespace
}  // namespace axon
