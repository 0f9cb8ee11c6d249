// Decode attention (loop/attention_group.h, tile/lower_attention.h): grouped
// query heads as the rows of one kv head's pass (GQA), MLA's two score
// products from the same key block, and split-KV over key ranges; compiled
// on AVX-512 and AVX2 and checked against the float64 reference under the
// error budget, with scores spanning +-80 and key counts that are not a
// multiple of the split; and no kernel of m7 or m8 stores a score matrix.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "backend/cpu_stages.h"
#include "codegen/cpu/attention.h"
#include "codegen/cpu/kernel_info.h"
#include "cpu_test_support.h"
#include "loop/partition.h"

namespace axon {
namespace {

// GQA: 8 query heads in groups of 4 over 2 kv heads, 320 keys (5 blocks of
// 64); the scale makes normal inputs' scores reach about +-80.
const std::string kGqa =
    "import numpy as np\n\n"
    "def f(q: \"f32[8, 64]\", K: \"f32[2, 320, 64]\", V: \"f32[2, 320, 64]\"):\n"
    "    qg = q.reshape(2, 4, 64)\n"
    "    s = qg @ np.swapaxes(K, -1, -2) * 3.0\n"
    "    e = np.exp(s - np.max(s, axis=-1, keepdims=True))\n"
    "    return ((e / np.sum(e, axis=-1, keepdims=True)) @ V).reshape(8, 64)\n";

// MLA absorbed decode: c_kv is both keys and values, a rotary product adds
// to the scores.
const std::string kMla =
    "import numpy as np\n\n"
    "def f(q_lat: \"f32[2, 8, 128]\", q_pe: \"f32[2, 8, 16]\", c_kv: \"f32[2, 320, 128]\", k_pe: \"f32[2, 320, 16]\"):\n"
    "    s = (q_lat @ np.swapaxes(c_kv, -1, -2) + q_pe @ np.swapaxes(k_pe, -1, -2)) * 1.5\n"
    "    e = np.exp(s - np.max(s, axis=-1, keepdims=True))\n"
    "    return (e / np.sum(e, axis=-1, keepdims=True)) @ c_kv\n";

const loop::Stage& attention_stage(const loop::Partition& p) {
  for (const loop::Stage& s : p.stages)
    if (s.kind == loop::StageKind::Attention) return s;
  throw std::runtime_error("no attention stage");
}

// The largest |score| of the inputs of `seed`, from the float64 inputs:
// scores = scale (Q . K^T [+ Q2 . K2^T]) over [batch, M, N].
double largest_score(const std::vector<ir::Tensor>& in, bool mla) {
  double top = 0;
  if (!mla) {  // q [8, 64] as [2, 4, 64], K [2, 320, 64]
    for (int b = 0; b < 2; ++b)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 320; ++j) {
          double s = 0;
          for (int d = 0; d < 64; ++d) s += in[0].data[(b * 4 + i) * 64 + d] * in[1].data[(b * 320 + j) * 64 + d];
          top = std::max(top, std::fabs(3.0 * s));
        }
    return top;
  }
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 320; ++j) {
        double s = 0;
        for (int d = 0; d < 128; ++d) s += in[0].data[(b * 8 + i) * 128 + d] * in[2].data[(b * 320 + j) * 128 + d];
        for (int d = 0; d < 16; ++d) s += in[1].data[(b * 8 + i) * 16 + d] * in[3].data[(b * 320 + j) * 16 + d];
        top = std::max(top, std::fabs(1.5 * s));
      }
  return top;
}

// Compiles the schedule, runs it on the inputs of `seed`, expects every
// output within budget; returns the largest |score| of those inputs.
double check(const ir::Graph& g, const schedule::Schedule& s, const target::Target& t, bool mla, uint64_t seed,
             const std::string& what) {
  EXPECT_TRUE(test::kGompPinned);
  EXPECT_EQ(schedule::why_illegal(g, s, t), "") << what;
  codegen::KernelSource k = backend::emit_cpu(g, s, t);
  runtime::CompileOptions co;
  co.flags = codegen::cpu_compile_flags(t, true);
  runtime::LoadedKernel kernel(runtime::compile_shared(k, co), k.entry);
  runtime::RunCheck r = runtime::run_and_check(g, kernel, seed);
  for (size_t i = 0; i < r.outputs.size(); ++i)
    EXPECT_TRUE(r.outputs[i].cmp.ok()) << what << " output " << i << ": max error/budget "
                                       << r.outputs[i].cmp.max_error_over_budget << " worst got "
                                       << r.outputs[i].cmp.worst_got << " ref " << r.outputs[i].cmp.worst_ref;
  return largest_score(r.inputs, mla);
}

TEST(attention_decode, GqaIsOneStageOverEachKvHeadWithItsGroupAsRows) {
  ir::Graph g = test::parse(kGqa);
  const loop::Partition p = loop::partition_graph(g);
  const loop::Stage& st = attention_stage(p);
  EXPECT_EQ(st.attention.qk.batch, 2);  // one pass per kv head
  EXPECT_EQ(st.attention.qk.M, 4);      // its group's query heads
  EXPECT_EQ(st.attention.qk.N, 320);
  EXPECT_FALSE(st.attention.has_qk2);
}

TEST(attention_decode, MlaScoresAreBothProductsInOneStage) {
  ir::Graph g = test::parse(kMla);
  const loop::Partition p = loop::partition_graph(g);
  ASSERT_EQ(p.stages.size(), 1u);
  const loop::Stage& st = p.stages[0];
  ASSERT_EQ(st.kind, loop::StageKind::Attention);
  EXPECT_TRUE(st.attention.has_qk2);
  EXPECT_EQ(st.attention.qk2.K, 16);
  EXPECT_EQ(st.attention.qk.K, 128);
  // Q, K, V (c_kv twice: keys and values), Q2, K2; nothing else read.
  ASSERT_EQ(st.inputs.size(), 5u);
  EXPECT_EQ(st.inputs[1], st.inputs[2]);
  EXPECT_EQ(st.attention.extra.size(), 1u);
}

TEST(attention_decode, SplitKvKernelsAreCorrectOnAvx512AndAvx2) {
  struct Spec {
    const char* name;
    const std::string* src;
    bool mla;
  };
  const Spec specs[] = {{"gqa", &kGqa, false}, {"mla", &kMla, true}};
  for (const Spec& sp : specs) {
    ir::Graph g = test::parse(*sp.src);
    for (const target::Target& t : test::targets()) {
      schedule::Space space = schedule::schedule_space(g, t);
      std::string prefix;
      for (const auto& k : space.knobs)
        if (k.name.find("attn.split") != std::string::npos) prefix = k.name.substr(0, k.name.size() - 5);
      ASSERT_NE(prefix, "") << sp.name << ": no attn.split knob";
      // 5 key blocks of 64 in 1, 2, 3 (2 + 2 + 1) and 4 (2 + 2 + 1) ranges;
      // threads 1 and 2; scores as dot products and register-tiled.
      for (int64_t split : {1, 2, 3, 4})
        for (int64_t kt : {0, 1}) {
          schedule::Schedule s = schedule::default_schedule(space);
          s[prefix + "split"] = split;
          s[prefix + "kt"] = kt;
          s[prefix + "bk"] = 64;
          s[prefix + "threads"] = split == 3 ? 1 : 2;
          const std::string what = std::string(sp.name) + " " + schedule::to_json(s).dump() + " on " +
                                   std::to_string(t.isa.vector_bits()) + " bits";
          const double top = check(g, s, t, sp.mla, 5 + static_cast<uint64_t>(split), what);
          EXPECT_GE(top, 60) << what << ": the scores should span about +-80";
          EXPECT_LE(top, 200) << what;
        }
    }
  }
}

// The kernels of m7 and m8, at every value of the attention knobs: no
// temporary holds the scores of a batch's rows (M x N, or more), within a
// stage or between stages; only the packed keys (Kt, K2t) grow with N, and
// split-KV's partial outputs with the ranges and the value width.
TEST(attention_decode, NoScoreMatrixIsStored) {
  for (const char* w : {"m7_gqa_decode", "m8_mla_decode"}) {
    ir::Graph g = test::load_workload(w);
    const loop::Partition p = loop::partition_graph(g);
    const loop::Stage& st = attention_stage(p);
    const int64_t scores = st.attention.qk.M * st.attention.qk.N;
    const target::Target& t = test::host();
    schedule::Space space = schedule::schedule_space(g, t);
    std::vector<schedule::Schedule> schedules = {schedule::default_schedule(space)};
    for (const auto& k : space.knobs)
      if (k.name.find(".attn.") != std::string::npos)
        for (int64_t v : k.values) {
          schedule::Schedule s = schedule::default_schedule(space);
          s[k.name] = v;
          if (schedule::why_illegal(g, s, t).empty()) schedules.push_back(s);
        }
    for (const schedule::Schedule& s : schedules) {
      const codegen::KernelInfo info = codegen::cpu_kernel_info(g, backend::lower_stages(g, s, t));
      const std::string what = std::string(w) + " " + schedule::to_json(s).dump();
      for (const codegen::Temporary& tmp : info.between_stages)
        EXPECT_LT(tmp.elements, scores) << what << ": " << tmp.name << " between stages";
      for (const codegen::StageInfo& si : info.stages)
        for (const codegen::Temporary& tmp : si.temporaries)
          if (tmp.name == "PO")  // split-KV's partial outputs: ranges x rows x value width
            EXPECT_EQ(tmp.elements % (st.attention.qk.M * st.attention.pv.N), 0) << what;
          else if (tmp.name != "Kt" && tmp.name != "K2t")
            EXPECT_LT(tmp.elements, scores) << what << ": " << tmp.name << " in a " << si.kind << " stage";
    }
  }
}

}  // namespace
}  // namespace axon
