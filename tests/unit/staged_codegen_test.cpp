// Partitioned kernels (loop/partition.h, backend/cpu_stages.h): which
// stages each workload gets, and that the staged kernels — matrix products
// through the GEMM generator with transposes and reshapes folded into
// strides, fused row stages between them — compute what the interpreter
// computes under the error budget, on the host and restricted to AVX2, for
// default and random legal schedules, and on small graphs with odd sizes.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

#include "backend/cpu_stages.h"
#include "codegen/cpu/emit_cpu.h"
#include "cpu_test_support.h"
#include "loop/partition.h"

namespace axon {
namespace {

using test::host;
using test::load_workload;
using test::parse;
using test::targets;

std::string kinds(const loop::Partition& p) {
  std::string s;
  for (const auto& st : p.stages) s += std::string(s.empty() ? "" : " ") + loop::stage_kind_name(st.kind);
  return s;
}

void expect_correct(const ir::Graph& g, const schedule::Schedule& s, const target::Target& t, const std::string& what) {
  test::expect_correct(g, s, t, what, 5);
}

schedule::Schedule random_legal(const ir::Graph& g, const schedule::Space& sp, const target::Target& t,
                                std::mt19937& rng) {
  for (int tries = 0; tries < 1000; ++tries) {
    schedule::Schedule s;
    for (const auto& k : sp.knobs) s[k.name] = k.values[rng() % k.values.size()];
    if (schedule::why_illegal(g, s, t).empty()) return s;
  }
  return schedule::default_schedule(sp);
}

// On every target: the default schedule and one random legal schedule.
void expect_correct_default_and_random(const ir::Graph& g, const std::string& what, std::mt19937& rng) {
  for (const auto& t : targets()) {
    schedule::Space sp = schedule::schedule_space(g, t);
    for (int rep = 0; rep < 2; ++rep) {
      schedule::Schedule s = rep == 0 ? schedule::default_schedule(sp) : random_legal(g, sp, t, rng);
      expect_correct(g, s, t, what + " at " + std::to_string(t.isa.vector_bits()) + " " + schedule::to_json(s).dump());
    }
  }
}

TEST(staged_codegen, workloadsGetTheExpectedStages) {
  struct Want { const char* w; const char* stages; };
  for (Want x : {Want{"s1_matmul", "contraction"}, Want{"s9_bmm", "contraction"},
                 Want{"m1_rmsnorm_matmul", "row contraction"}, Want{"m2_matmul_bias_gelu", "epilogue"},
                 Want{"m3_gated_mlp", "epilogue contraction"},
                 Want{"m4_lora", "contraction contraction epilogue"},
                 Want{"m5_attention", "attention"}, Want{"m6_causal_attention", "attention"},
                 Want{"m7_gqa_decode", "attention row"}, Want{"m9_qknorm_attention", "attention"},
                 Want{"m11_softmax_matmul", "row contraction"}, Want{"s2_softmax", "row"},
                 Want{"s8_transpose", "copy"}}) {
    EXPECT_EQ(kinds(loop::partition_graph(load_workload(x.w))), x.stages) << x.w;
  }
  // Roles of several labels are flattened only when their strides compose.
  EXPECT_EQ(kinds(loop::partition_graph(parse("import numpy as np\n\ndef f(A: \"f32[2, 3, 5, 7]\", B: \"f32[7, 9]\"):\n"
                                               "    return np.einsum('abmk,kn->bamn', A, B)\n"))),
            "naive");
  // m5's K^T is read through strides, never copied: the first product reads K itself.
  ir::Graph g = load_workload("m5_attention");
  loop::Partition p = loop::partition_graph(g);
  const loop::Contraction& c = p.stages[0].attention.qk;
  EXPECT_EQ(g[c.b_base].op, ir::Op::Param);
  EXPECT_EQ(c.b_k, 1);
  EXPECT_EQ(c.b_n, 64);
  EXPECT_EQ(c.batch, 16);
  // The attention stage reads Q, K and V; the score is the scaled product
  // (m5) or the mask's select over it (m6), the mask computed in the kernel
  // from iotas rather than read from a stage of its own.
  EXPECT_EQ(p.stages[0].inputs.size(), 3u);
  EXPECT_EQ(p.stages[0].attention.score_graph[p.stages[0].attention.score].op, ir::Op::Mul);
  loop::Partition p6 = loop::partition_graph(load_workload("m6_causal_attention"));
  ASSERT_EQ(p6.stages.size(), 1u);
  EXPECT_EQ(p6.stages[0].inputs.size(), 3u);
  EXPECT_EQ(p6.stages[0].attention.computed, std::vector<bool>{true});
  EXPECT_EQ(p6.stages[0].attention.score_graph[p6.stages[0].attention.score].op, ir::Op::Select);
}

// A softmax whose probabilities are also an output, or over another axis,
// or of a score that is not elementwise, stays three stages.
TEST(staged_codegen, attentionNeedsTheWholePattern) {
  const std::string head =
      "import numpy as np\n\ndef f(Q: \"f32[2, 64, 64]\", K: \"f32[2, 128, 64]\", V: \"f32[2, 128, 64]\"):\n"
      "    s = Q @ np.swapaxes(K, -1, -2)\n";
  auto stages = [&](const std::string& body) { return kinds(loop::partition_graph(parse(head + body))); };
  const std::string softmax = "    e = np.exp(s - np.max(s, axis=-1, keepdims=True))\n    p = e / np.sum(e, axis=-1, keepdims=True)\n";
  EXPECT_EQ(stages(softmax + "    return p @ V\n"), "attention");
  EXPECT_EQ(stages(softmax + "    return p @ V, p\n"), "contraction row contraction");
  EXPECT_EQ(stages("    e = np.exp(s - np.max(s, axis=1, keepdims=True))\n    p = e / np.sum(e, axis=1, keepdims=True)\n"
                   "    return np.swapaxes(p, -1, -2) @ Q\n").find("attention"),
            std::string::npos);
  EXPECT_EQ(stages("    e = np.exp(s - np.max(s, axis=-1, keepdims=True))\n    p = e / np.sum(e * 2.0, axis=-1, keepdims=True)\n"
                   "    return p @ V\n").find("attention"),
            std::string::npos);
}

TEST(staged_codegen, contractionWorkloadsAreCorrect) {
  for (const char* w : {"s1_matmul", "s9_bmm", "m2_matmul_bias_gelu", "m4_lora", "m7_gqa_decode", "m8_mla_decode",
                        "m11_softmax_matmul"}) {
    ir::Graph g = load_workload(w);
    const bool small = std::string(w) == "s9_bmm" || std::string(w) == "m7_gqa_decode" || std::string(w) == "m8_mla_decode";
    for (const auto& t : small ? targets() : std::vector<target::Target>{host()}) {
      schedule::Space sp = schedule::schedule_space(g, t);
      ASSERT_FALSE(sp.knobs.empty()) << w;
      expect_correct(g, schedule::default_schedule(sp), t, std::string(w) + " default at " +
                                                               std::to_string(t.isa.vector_bits()));
    }
  }
}

TEST(staged_codegen, attentionAndMlpWorkloadsAreCorrect) {
  for (const char* w : {"m3_gated_mlp", "m6_causal_attention", "m9_qknorm_attention"}) {
    ir::Graph g = load_workload(w);
    schedule::Space sp = schedule::schedule_space(g, host());
    expect_correct(g, schedule::default_schedule(sp), host(), std::string(w) + " default");
  }
}

// Odd sizes (tiles cut by every edge), transposed and broadcast operands,
// matrix-vector products, reshaped operands, an epilogue, random schedules.
// A matrix-vector product (no batch, one output row or column) is no
// contraction stage: the loops pipeline lowers it as one dot product per
// output element (A @ x) or as row updates (x @ A).
TEST(staged_codegen, oddContractionsWithRandomSchedules) {
  const std::string matrix_vector[] = {
      "def f(A: \"f32[33, 65]\", x: \"f32[65]\"):\n    return A @ x\n",
      "def f(x: \"f32[65]\", A: \"f32[65, 33]\"):\n    return x @ A\n",
      "def f(x: \"f32[65]\", A: \"f32[65, 33]\", b: \"f32[33]\"):\n    return np.tanh(x @ A + b)\n",
  };
  const char* specs[] = {
      "def f(A: \"f32[37, 19]\", B: \"f32[19, 53]\"):\n    return A @ B\n",
      "def f(A: \"f32[19, 37]\", B: \"f32[53, 19]\"):\n    return A.T @ B.T\n",
      "def f(A: \"f32[3, 13, 7]\", B: \"f32[7, 29]\"):\n    return A @ B\n",
      "def f(A: \"f32[2, 3, 5, 7]\", B: \"f32[7, 29]\"):\n    return np.einsum('abmk,kn->abmn', A, B)\n",
      "def f(Q: \"f32[4, 3, 16]\", K: \"f32[4, 21, 16]\"):\n    return np.einsum('bmk,bnk->bnm', Q, K)\n",
      "def f(q: \"f32[6, 16]\", K: \"f32[2, 21, 16]\"):\n    return q.reshape(2, 3, 16) @ np.swapaxes(K, 1, 2)\n",
      "def f(X: \"f32[9, 40]\", W: \"f32[40, 70]\", b: \"f32[70]\"):\n    return np.maximum(X @ W + b, 0.0), X * 2.0\n",
  };
  std::mt19937 rng(5);
  for (const char* body : specs) {
    std::string src = std::string("import numpy as np\n\n") + body;
    ir::Graph g = parse(src);
    loop::Partition p = loop::partition_graph(g);
    bool has_contraction = false;
    for (const auto& st : p.stages)
      has_contraction |= st.kind == loop::StageKind::Contraction || st.kind == loop::StageKind::Epilogue;
    EXPECT_TRUE(has_contraction) << src << kinds(p);
    expect_correct_default_and_random(g, src, rng);
  }
  for (const std::string& body : matrix_vector) {
    std::string src = "import numpy as np\n\n" + body;
    ir::Graph g = parse(src);
    loop::Partition p = loop::partition_graph(g);
    for (const auto& st : p.stages)
      EXPECT_TRUE(st.kind != loop::StageKind::Contraction && st.kind != loop::StageKind::Epilogue) << src << kinds(p);
    expect_correct_default_and_random(g, src, rng);
  }
}

// A product and the elementwise work on its result are one Epilogue stage:
// bias, activations, clamp, residual, gate, row scale, batched; the
// look-alikes keep their stages: a value of the epilogue also returned, the
// product also returned, a reduction after the product, the product read
// transposed.
TEST(staged_codegen, epiloguesAndTheirLookAlikes) {
  const std::string head = "import numpy as np\n\ndef f(X: \"f32[21, 40]\", W: \"f32[40, 37]\", b: \"f32[37]\", "
                           "R: \"f32[21, 37]\", s: \"f32[21, 1]\"):\n";
  auto stages = [&](const std::string& body) { return kinds(loop::partition_graph(parse(head + body))); };
  EXPECT_EQ(stages("    return np.maximum(X @ W + b, 0.0)\n"), "epilogue");
  EXPECT_EQ(stages("    y = X @ W\n    return np.where(y > 0, y, 0.01 * y) + R\n"), "epilogue");
  EXPECT_EQ(stages("    y = X @ W + b\n    return y / (1.0 + np.exp(-y)) * R\n"), "epilogue");
  EXPECT_EQ(stages("    return np.clip(X @ W, -0.5, 0.5) * s\n"), "epilogue");
  EXPECT_EQ(stages("    y = X @ W + b\n    return np.maximum(y, 0.0), y\n"), "contraction row");
  EXPECT_EQ(stages("    y = X @ W\n    return y * 2.0, y\n"), "contraction row");
  EXPECT_EQ(stages("    return np.sum(X @ W + b, axis=-1)\n"), "contraction row");
  EXPECT_EQ(stages("    y = X @ W\n    return y - np.max(y, axis=-1, keepdims=True)\n"), "contraction row");
  // Read transposed (square, so the shape is the same): the elementwise
  // stage reads the product through the transpose's view (transpose_blocks'
  // blocks), never at the element being computed, so no epilogue.
  EXPECT_EQ(kinds(loop::partition_graph(parse("import numpy as np\n\ndef f(X: \"f32[16, 8]\", W: \"f32[8, 16]\", "
                                              "R: \"f32[16, 16]\"):\n    return (X @ W).T + R\n"))),
            "contraction naive");

  // Two products over one X whose epilogues meet are one paired stage
  // (loop/paired_epilogue.h); the gate also returned, or products over
  // two different A, keep their stages.
  const std::string pair_head = "import numpy as np\n\ndef f(X: \"f32[21, 40]\", Y: \"f32[21, 40]\", "
                                "W1: \"f32[40, 37]\", W3: \"f32[40, 37]\"):\n";
  auto paired = [&](const std::string& body) {
    loop::Partition p = loop::partition_graph(parse(pair_head + body));
    std::string s = kinds(p);
    for (const auto& st : p.stages) s += st.kind == loop::StageKind::Epilogue && st.epilogue.paired ? " (paired)" : "";
    return s;
  };
  EXPECT_EQ(paired("    h = X @ W1\n    return h / (1.0 + np.exp(-h)) * (X @ W3)\n"), "epilogue (paired)");
  EXPECT_EQ(paired("    g = np.tanh(X @ W1)\n    return g * (X @ W3), g\n"), "epilogue epilogue");
  EXPECT_EQ(paired("    return np.tanh(X @ W1) * (Y @ W3)\n"), "epilogue epilogue");

  const char* specs[] = {
      "def f(X: \"f32[21, 40]\", W: \"f32[40, 37]\", b: \"f32[37]\"):\n"
      "    y = X @ W + b\n    return 0.5 * y * (1.0 + np.tanh(0.7978845608028654 * (y + 0.044715 * y * y * y)))\n",
      "def f(X: \"f32[21, 40]\", W: \"f32[40, 37]\", R: \"f32[21, 37]\", s: \"f32[21, 1]\"):\n"
      "    y = X @ W\n    return np.clip(y * s, -0.5, 0.5) + np.where(y > 0, y, 0.01 * y) * R\n",
      "def f(A: \"f32[3, 13, 70]\", B: \"f32[3, 70, 29]\", b: \"f32[29]\"):\n    return np.maximum(A @ B + b, 0.0)\n",
      "def f(x: \"f32[2, 65]\", A: \"f32[65, 33]\", b: \"f32[33]\"):\n    return np.tanh(x @ A + b)\n",
      "def f(X: \"f32[9, 300]\", W1: \"f32[300, 20]\", W3: \"f32[300, 20]\"):\n"
      "    h = X @ W1\n    return h / (1.0 + np.exp(-h)) * (X @ W3)\n",
      // Paired with inputs on both sides: a bias on each product, a residual
      // on the gate (the first's inputs after the second's in the stage).
      "def f(X: \"f32[13, 70]\", W1: \"f32[70, 37]\", b1: \"f32[37]\", W3: \"f32[70, 37]\", R: \"f32[13, 37]\"):\n"
      "    h = X @ W1 + b1\n    return np.tanh(h) * ((X @ W3) + R)\n",
      "def f(X: \"f32[17, 24]\", W: \"f32[24, 40]\", M: \"bool[17, 40]\"):\n    return np.where(M, X @ W, -1.0)\n",
      // A batch against a shared weight is one product of 3 x 23 rows (the
      // batch folded into m, an edge tile crossing batches); the bias and
      // the residual are read per batch at (m / 23, ...).
      "def f(X: \"f32[3, 23, 40]\", W: \"f32[40, 37]\", b: \"f32[3, 1, 37]\", R: \"f32[3, 23, 1]\"):\n"
      "    return np.maximum(X @ W + b, 0.0) * R\n",
  };
  target::Target scalar = host();
  scalar.isa = target::Isa{};
  std::vector<target::Target> ts = targets();
  ts.push_back(scalar);
  for (const char* body : specs) {
    std::string src = std::string("import numpy as np\n\n") + body;
    ir::Graph g = parse(src);
    EXPECT_NE(kinds(loop::partition_graph(g)).find("epilogue"), std::string::npos) << src;
    for (const auto& t : ts) {
      schedule::Schedule s = schedule::default_schedule(schedule::schedule_space(g, t));
      for (const auto& [name, v] : schedule::default_schedule(schedule::schedule_space(g, t))) {
        if (name.size() <= 9 || name.compare(name.size() - 9, 9, ".epilogue") != 0) continue;
        // A paired stage's two forms too (gemm.pair; pair 1 only with the
        // epilogue on each tile).
        const std::string pair = name.substr(0, name.size() - 8) + "pair";
        const bool paired = s.count(pair) != 0;
        for (int64_t e : {1, 0})
          for (int64_t q : {1, 0}) {
            if (!paired && q == 0) continue;
            s[name] = e;
            if (paired) s[pair] = q;
            if (paired && q == 1 && e == 0) continue;
            expect_correct(g, s, t, src + " at " + std::to_string(t.isa.vector_bits()) + " " + schedule::to_json(s).dump());
          }
        if (paired) s[pair] = 1;
      }
    }
  }
}

// Transposes of every rank with odd sizes (edges of the 8 x 8 blocks and of
// the tiles), through reshapes, of non-float elements, and the s8 workload:
// each returned as it is (a map of a transpose, or rows of at least 16
// elements kept contiguous, are read in place: tile_transpose_blocks_test).
TEST(staged_codegen, layoutCopiesWithRandomSchedules) {
  const char* specs[] = {
      "def f(X: \"f32[13, 21]\"):\n    return np.ascontiguousarray(X.T)\n",
      "def f(X: \"f32[5, 67, 41]\"):\n    return np.transpose(X, (2, 0, 1))\n",
      "def f(X: \"f32[5, 16, 24]\"):\n    return np.transpose(X, (0, 2, 1)), X * 2.0\n",
      "def f(X: \"f32[6, 40]\"):\n    return X.reshape(6, 5, 8).transpose(2, 1, 0)\n",
      "def f(X: \"f32[4, 9, 7]\"):\n    return np.transpose(X, (1, 0, 2))\n",
      "def f(X: \"i32[11, 19]\"):\n    return X.T\n",
  };
  std::mt19937 rng(9);
  for (const char* body : specs) {
    std::string src = std::string("import numpy as np\n\n") + body;
    ir::Graph g = parse(src);
    loop::Partition p = loop::partition_graph(g);
    EXPECT_NE(kinds(p).find("copy"), std::string::npos) << src << kinds(p);
    expect_correct_default_and_random(g, src, rng);
  }
  ir::Graph g = load_workload("s8_transpose");
  for (const auto& t : targets())
    expect_correct(g, schedule::default_schedule(schedule::schedule_space(g, t)), t, "s8 at " + std::to_string(t.isa.vector_bits()));
}

// Every register block, tile order, band and store kind of the copy
// generator on each target, on planes cut by the edges of 16 x 16 blocks, of
// the bands (48 input rows: a band of 32 and one of 16; 80: 64 and 16) and of
// the tiles; the output rows (48, 32 and 80 wide) are whole lines, so the
// streaming stores run (the checked buffers are 64-byte aligned).
TEST(staged_codegen, layoutCopiesInEveryBlockOrderAndStoreKind) {
  const char* specs[] = {
      "def f(X: \"f32[48, 37]\"):\n    return np.ascontiguousarray(X.T)\n",
      "def f(X: \"f32[3, 32, 44]\"):\n    return np.transpose(X, (0, 2, 1))\n",
      "def f(X: \"f32[80, 100]\"):\n    return np.ascontiguousarray(X.T)\n",
  };
  for (const char* body : specs) {
    std::string src = std::string("import numpy as np\n\n") + body;
    ir::Graph g = parse(src);
    for (const auto& t : targets()) {
      schedule::Space sp = schedule::schedule_space(g, t);
      schedule::Schedule s = schedule::default_schedule(sp);
      ASSERT_TRUE(s.count("k0.copy.width")) << src;
      for (int64_t width : {8, 16})
        for (int64_t order : {0, 1})
          for (int64_t nt : {0, 1})
            for (int64_t band : {1, 2, 4}) {
            s["k0.copy.width"] = width;
            s["k0.copy.order"] = order;
            s["k0.copy.nt_store"] = nt;
            s["k0.copy.band"] = band;
            s["k0.copy.tile"] = order ? 16 : std::max<int64_t>(32, 16 * band);
            std::string why = schedule::why_illegal(g, s, t);
            if (width == 16 && t.isa.vector_bits() < 512) {
              EXPECT_NE(why, "") << "16 x 16 blocks without AVX-512 must be refused";
              continue;
            }
            if (band > 1 && order == 1) {
              EXPECT_NE(why, "") << "bands of input rows in order 1 must be refused";
              continue;
            }
            if (band > 1 && nt == 0) continue;  // the same loops as with streaming stores
            ASSERT_EQ(why, "") << src << schedule::to_json(s).dump();
            const std::string text = backend::emit_cpu(g, s, t).source;
            EXPECT_EQ(text.find("_stream_ps") != std::string::npos, nt == 1) << text;
            expect_correct(g, s, t, src + " at " + std::to_string(t.isa.vector_bits()) + " " + schedule::to_json(s).dump());
          }
    }
  }
}

// Buffers at offsets within a line (numpy's start 16 bytes past one): the
// streaming stores are skipped for a misaligned output, every element lands
// where it belongs, and nothing outside the output is written.
TEST(staged_codegen, layoutCopiesAtEveryAlignment) {
  ir::Graph g = parse("import numpy as np\n\ndef f(X: \"f32[48, 64]\"):\n    return np.ascontiguousarray(X.T)\n");
  for (const auto& t : targets()) {
    schedule::Schedule s = schedule::default_schedule(schedule::schedule_space(g, t));
    for (int64_t width : {8, 16})
      for (int64_t order : {0, 1})
        for (int64_t nt : {0, 1}) {
          if (width == 16 && t.isa.vector_bits() < 512) continue;
          s["k0.copy.width"] = width, s["k0.copy.order"] = order, s["k0.copy.nt_store"] = nt;
          s["k0.copy.tile"] = 32;
          ASSERT_EQ(schedule::why_illegal(g, s, t), "");
          codegen::KernelSource k = backend::emit_cpu(g, s, t);
          runtime::CompileOptions co;
          co.flags = codegen::cpu_compile_flags(t, true);
          runtime::LoadedKernel kernel(runtime::compile_shared(k, co), k.entry);
          for (int out_off : {0, 1, 4, 7, 15})
            for (int in_off : {0, 3}) {
              std::vector<float, runtime::CacheLineAllocator<float>> in(48 * 64 + 16), out(64 * 48 + 32, -7.0f);
              for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
              kernel.call({in.data() + in_off, out.data() + out_off});
              int bad = 0;
              for (int64_t r = 0; r < 64; ++r)
                for (int64_t c = 0; c < 48; ++c)
                  if (out[static_cast<size_t>(out_off + r * 48 + c)] != in[static_cast<size_t>(in_off + c * 64 + r)] && bad++ < 3)
                    ADD_FAILURE() << "width " << width << " order " << order << " nt " << nt << " out+" << out_off
                                  << " in+" << in_off << ": out[" << r << "][" << c << "]";
              for (int64_t e = 0; e < static_cast<int64_t>(out.size()); ++e)
                if ((e < out_off || e >= out_off + 64 * 48) && out[static_cast<size_t>(e)] != -7.0f && bad++ < 3)
                  ADD_FAILURE() << "wrote outside the output at " << e - out_off;
            }
        }
  }
}

// Rows that repeat (a [R, C] value broadcast over a leading batch axis), bool
// parameters, and a causal mask computed by a stage of its own.
TEST(staged_codegen, repeatedRowsBoolInputsAndMasks) {
  const char* specs[] = {
      "def f(x: \"f32[4, 5, 19]\", b: \"f32[5, 19]\"):\n    return x * b + np.tanh(x)\n",
      "def f(x: \"f32[3, 7, 33]\", m: \"bool[3, 7, 33]\", k: \"bool[7, 33]\"):\n"
      "    return np.where(m, x, 0.0) + np.where(k, 1.0, x), np.sum(np.where(k, x, 2.0), axis=-1)\n",
      "def f(s: \"f32[3, 5, 19]\"):\n    mask = np.triu(np.ones((5, 19), dtype=bool), k=1)\n"
      "    s = np.where(mask, -np.inf, s)\n    m = np.max(s, axis=-1, keepdims=True)\n    e = np.exp(s - m)\n"
      "    return e / np.sum(e, axis=-1, keepdims=True)\n",
  };
  std::mt19937 rng(13);
  for (const char* body : specs) {
    std::string src = std::string("import numpy as np\n\n") + body;
    ir::Graph g = parse(src);
    EXPECT_NE(kinds(loop::partition_graph(g)).find("row"), std::string::npos) << src << kinds(loop::partition_graph(g));
    expect_correct_default_and_random(g, src, rng);
  }
  EXPECT_EQ(kinds(loop::partition_graph(parse(std::string("import numpy as np\n\n") + specs[2]))), "naive row");
}

// m3 on two threads of an AVX2 host with a 512 KiB L2: the paired stage's
// blocks count both products' columns, so its defaults are the wide
// product's: nc 256 (128 columns of each) and 22 column blocks, which split
// evenly over the threads (split_n 1, no barrier per K slice), as do the
// down projection's four blocks of 256.
TEST(staged_codegen, pairedDefaultsAreTheWideProducts) {
  target::Target t;
  t.name = "avx2-512k-l2";
  t.cores = 2, t.threads = 2;
  t.caches = {{1, 32 << 10, 64, 1}, {2, 512 << 10, 64, 1}, {3, 32 << 20, 64, 2}};
  t.isa.avx2 = t.isa.fma = true;
  ir::Graph g = load_workload("m3_gated_mlp");
  loop::Partition p = loop::partition_graph(g);
  ASSERT_EQ(kinds(p), "epilogue contraction");
  ASSERT_TRUE(p.stages[0].epilogue.paired);
  schedule::Schedule s = schedule::default_schedule(schedule::schedule_space(g, t));
  EXPECT_EQ(schedule::why_illegal(g, s, t), "");
  EXPECT_EQ(s.at("k0.gemm.pair"), 1);
  EXPECT_EQ(s.at("k0.gemm.nc"), 256);
  EXPECT_EQ(s.at("k0.gemm.split_n"), 1);
  EXPECT_EQ(s.at("k1.gemm.nc"), 256);
  EXPECT_EQ(s.at("k1.gemm.split_n"), 1);
}

TEST(staged_codegen, gemmKnobsAreCheckedPerStage) {
  ir::Graph g = load_workload("m4_lora");
  schedule::Space sp = schedule::schedule_space(g, host());
  schedule::Schedule s = schedule::default_schedule(sp);
  EXPECT_EQ(schedule::why_illegal(g, s, host()), "");
  EXPECT_GT(schedule::predicted_seconds(g, s, host()), 0);
  s["k1.gemm.mc"] = 48;
  s["k1.gemm.mr"] = 14;  // 48 is no multiple of 14
  std::string why = schedule::why_illegal(g, s, host());
  EXPECT_NE(why.find("stage 1"), std::string::npos) << why;
  s = schedule::default_schedule(sp);
  s["k0.gemm.threads"] = 1000;
  EXPECT_NE(schedule::why_illegal(g, s, host()), "");
}

}  // namespace
}  // namespace axon
