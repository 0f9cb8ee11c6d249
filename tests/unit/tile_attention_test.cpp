// Attention as one tile program (tile/lower_attention.h): IR in -> IR out
// through the interpreter, and the printed kernel compiled and run, against
// softmax(score(Q K^T)) V computed directly in float64, with a plain scale
// and with a causal mask read from an extra input.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "codegen/c_like/tile_cpp.h"
#include "runtime/compile_shared.h"
#include "runtime/loaded_kernel.h"
#include "tile/interpret.h"
#include "tile/lower_attention.h"
#include "tile/print.h"
#include "tile/verify.h"
#include "tile_test_support.h"

namespace axon::tile {
namespace {

using test::problems_text;

AttentionShape dense(int64_t batch, int64_t M, int64_t N, int64_t D, int64_t Dv) {
  AttentionShape a;
  a.batch = batch, a.M = M, a.N = N, a.D = D, a.Dv = Dv;
  a.q_batch = M * D, a.q_m = D, a.q_k = 1;
  a.k_batch = N * D, a.k_n = D, a.k_k = 1;
  a.v_batch = N * Dv, a.v_k = Dv, a.v_n = 1;
  a.o_batch = M * Dv, a.o_m = Dv, a.o_n = 1;
  return a;
}

ir::Node f32op(ir::Op o, ir::DType d = ir::DType::F32) {
  ir::Node n{};
  n.op = o;
  n.type = ir::Type{d, {}};
  return n;
}

struct Case {
  AttentionShape a;
  bool causal = false;
  std::vector<double> q, k, v;
  std::vector<double> mask;  // [M][N], 1 where masked (causal)
};

// `spread` scales Q: 1 gives scores within about +-10, 8 about +-80 (the
// online softmax's rescales then span e^160).
Case make(int64_t batch, int64_t M, int64_t N, int64_t D, int64_t Dv, bool causal, double spread = 1) {
  Case c;
  c.a = dense(batch, M, N, D, Dv);
  c.causal = causal;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> dist(-2, 2);
  for (auto* x : {&c.q, &c.k}) x->resize(batch * (x == &c.q ? M : N) * D);
  c.v.resize(batch * N * Dv);
  for (auto* x : {&c.q, &c.k, &c.v})
    for (double& e : *x) e = static_cast<float>(dist(rng) * (x == &c.q ? spread : 1));
  if (causal) {
    c.mask.resize(M * N);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) c.mask[i * N + j] = j > i ? 1 : 0;
  }
  return c;
}

// score = s * 0.5, or -inf where the mask says so.
ScoreFn score_of(const Case& c) {
  return [causal = c.causal, N = c.a.N](const std::vector<Index>& bij, const Value& s, const std::vector<int>& extra) {
    Value scaled = Value::apply(f32op(ir::Op::Mul), {s, Value::constant(0.5, ir::DType::F32)});
    if (!causal) return scaled;
    Value m = Value::load(extra.at(0), {bij[1] * Index(N) + bij[2]}, ir::DType::Bool);
    return Value::apply(f32op(ir::Op::Select),
                        {m, Value::constant(-std::numeric_limits<double>::infinity(), ir::DType::F32), scaled});
  };
}

std::vector<Buffer> extras_of(const Case& c) {
  if (!c.causal) return {};
  return {Buffer{"mask", ir::DType::Bool, {c.a.M * c.a.N}, Scope::Input, 3}};
}

std::vector<double> reference(const Case& c) {
  const AttentionShape& a = c.a;
  std::vector<double> out(a.batch * a.M * a.Dv);
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t i = 0; i < a.M; ++i) {
      std::vector<double> x(a.N);
      double mx = -INFINITY;
      for (int64_t j = 0; j < a.N; ++j) {
        double s = 0;
        for (int64_t d = 0; d < a.D; ++d) s += c.q[(b * a.M + i) * a.D + d] * c.k[(b * a.N + j) * a.D + d];
        x[j] = c.causal && c.mask[i * a.N + j] ? -INFINITY : 0.5 * s;
        mx = std::max(mx, x[j]);
      }
      double l = 0;
      for (double& e : x) l += (e = std::exp(e - mx));
      for (int64_t e = 0; e < a.Dv; ++e) {
        double o = 0;
        for (int64_t j = 0; j < a.N; ++j) o += x[j] * c.v[(b * a.N + j) * a.Dv + e];
        out[(b * a.M + i) * a.Dv + e] = o / l;
      }
    }
  return out;
}

// The interpreter's inputs: q, k, v and (causal) the mask, typed as the
// kernel's first buffers.
std::vector<ir::Tensor> inputs_of(const Case& c, const Kernel& k) {
  const std::vector<double>* data[] = {&c.q, &c.k, &c.v, &c.mask};
  std::vector<ir::Tensor> in(3 + (c.causal ? 1 : 0));
  for (size_t i = 0; i < in.size(); ++i) {
    in[i].type = ir::Type{k.buffers[i].dtype, k.buffers[i].shape};
    in[i].data = *data[i];
  }
  return in;
}

TEST(tile_attention, InterpretsToSoftmaxOfScoresTimesValues) {
  for (int variant = 0; variant < 4; ++variant) {
    const bool causal = variant % 2 == 1;
    Case c = make(2, 8, 16, 4, 8, causal);
    AttentionSchedule s;
    s.bq = 4, s.bk = 8, s.mr = 2, s.nr = 4, s.threads = 2, s.transpose_k = variant < 2;
    Kernel k = lower_attention(c.a, s, extras_of(c), score_of(c));
    ASSERT_EQ(problems_text(verify(k)), "") << print(k);
    std::vector<double> got = interpret(k, inputs_of(c, k)).at(0).data, want = reference(c);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-12) << "causal " << causal << " element " << i;
  }
}

// Scores as dot products take the query rows of a block in groups of 4, 3,
// 2 or 1 (the largest dividing the block), one sum per row in one loop
// over d: blocks of 8, 6, 2 and 5 rows, causal or not, give the reference.
TEST(tile_attention, DotProductsOverRowGroupsInterpretToTheSameSoftmax) {
  for (int64_t bq : {8, 6, 2, 5})
    for (bool causal : {false, true}) {
      Case c = make(2, bq == 8 ? 16 : bq * 2, 16, 5, 8, causal);
      AttentionSchedule s;
      s.bq = bq, s.bk = 8, s.mr = 1, s.nr = 4, s.threads = 1, s.transpose_k = false;
      Kernel k = lower_attention(c.a, s, extras_of(c), score_of(c));
      ASSERT_EQ(problems_text(verify(k)), "") << print(k);
      const std::string text = print(k);
      const int64_t group = bq % 4 == 0 ? 4 : bq % 3 == 0 ? 3 : bq % 2 == 0 ? 2 : 1;
      EXPECT_EQ(text.find("dot_" + std::to_string(group)), std::string::npos) << "bq " << bq << ":\n" << text;
      if (group > 1) EXPECT_NE(text.find("dot_" + std::to_string(group - 1)), std::string::npos) << "bq " << bq << ":\n" << text;
      std::vector<double> got = interpret(k, inputs_of(c, k)).at(0).data, want = reference(c);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-12) << "bq " << bq << ", causal " << causal << ", element " << i;
    }
}

// The largest over every score of f(d-th products of that score), 0.5 x
// the sum of them (the specs' scale).
template <class Term>
double largest_over_scores(const Case& c, Term term) {
  const AttentionShape& a = c.a;
  double top = 0;
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t i = 0; i < a.M; ++i)
      for (int64_t j = 0; j < a.N; ++j) {
        double s = 0;
        for (int64_t d = 0; d < a.D; ++d) s += term(c.q[(b * a.M + i) * a.D + d] * c.k[(b * a.N + j) * a.D + d]);
        top = std::max(top, std::fabs(0.5 * s));
      }
  return top;
}

double largest_score(const Case& c) {
  return largest_over_scores(c, [](double p) { return p; });
}

// How far float32 can move a score: the largest 0.5 sum_d |q_d k_d| times
// (D + 2) u. A weight exp(x - m) moves by about twice that, relatively,
// and an output by that times the largest |V| (2 here).
double score_rounding(const Case& c) {
  return largest_over_scores(c, [](double p) { return std::fabs(p); }) * static_cast<double>(c.a.D + 2) *
         std::ldexp(1.0, -24);
}

TEST(tile_attention, KeyRangeCounts) {
  int64_t per = 0;
  EXPECT_EQ(key_ranges(64, 1, &per), 1);
  EXPECT_EQ(per, 64);
  EXPECT_EQ(key_ranges(64, 16, &per), 16);
  EXPECT_EQ(per, 4);
  EXPECT_EQ(key_ranges(7, 3, &per), 3);  // 3 + 3 + 1
  EXPECT_EQ(per, 3);
  EXPECT_EQ(key_ranges(5, 4, &per), 3);  // 2 + 2 + 1: a fourth range would be empty
  EXPECT_EQ(per, 2);
  EXPECT_EQ(key_ranges(3, 32, &per), 3);
  EXPECT_EQ(per, 1);
}

// Split-KV: the key blocks of each batch in ranges (odd counts: the last
// range shorter), partials combined; with and without the causal mask
// (ranges wholly masked for a query block contribute nothing), K^T
// packed or dot products, scores spanning +-80.
TEST(tile_attention, SplitKeyRangesInterpretToTheSameSoftmax) {
  for (int splits : {2, 3, 4, 16}) {
    for (int variant = 0; variant < 4; ++variant) {
      const bool causal = variant % 2 == 1;
      Case c = make(2, 8, 56, 4, 8, causal, 16);  // 7 key blocks of 8
      ASSERT_GE(largest_score(c), 60);
      AttentionSchedule s;
      // bq = M (one query block) packs each key block at the top of its
      // step; bq = 4 packs the batch's keys up front.
      s.bq = splits % 2 == 0 ? 8 : 4, s.bk = 8, s.mr = 2, s.nr = 4, s.threads = 2, s.transpose_k = variant < 2, s.splits = splits;
      s.pack_tile = splits >= 3 ? 4 : 0;  // K^T packed by 4 x 4 copies
      Kernel k = lower_attention(c.a, s, extras_of(c), score_of(c));
      ASSERT_EQ(problems_text(verify(k)), "") << print(k);
      ASSERT_NE(print(k).find("combine the ranges"), std::string::npos);
      std::vector<double> got = interpret(k, inputs_of(c, k)).at(0).data, want = reference(c);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-12 * (1 + std::fabs(want[i])))
            << "splits " << splits << " causal " << causal << " element " << i;
    }
  }
}

bool host_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}

TEST(tile_attention, PrintedKernelMatchesOnAvx512Avx2AndScalar) {
  static void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
  (void)gomp;
  for (int bits : {512, 256, 0}) {
    if (bits == 512 && !host_has_avx512()) continue;
    for (int variant = 0; variant < 12; ++variant) {
      // variants 4..11: split-KV, 3 and 4 ranges of 5 key blocks (ranges of
      // 2, 2, 1 and 2, 2, 1: the fourth would be empty), scores to +-80.
      const bool causal = variant % 2 == 1;
      const int splits = variant < 4 ? 1 : variant < 8 ? 3 : 4;
      Case c = make(3, 64, splits > 1 ? 320 : 128, 16, 32, causal, splits > 1 ? 8 : 1);
      if (splits > 1) ASSERT_GE(largest_score(c), 60);
      AttentionSchedule s;
      s.bq = 32, s.bk = 64, s.mr = 4, s.nr = bits == 512 ? 16 : bits == 256 ? 8 : 4, s.threads = 2;
      s.transpose_k = variant % 4 < 2;
      // The split variants pack K^T by in-register transposes where the
      // vector has them.
      s.pack_tile = splits > 1 ? (bits == 512 ? 16 : bits == 256 ? 8 : 0) : 0;
      s.splits = splits;
      Kernel k = lower_attention(c.a, s, extras_of(c), score_of(c), "attn");
      ASSERT_EQ(problems_text(verify(k)), "");
      codegen::TileCppOptions o;
      o.vector_bits = bits;
      codegen::KernelSource ks;
      ks.entry = "attn_entry";
      ks.header = "#include <stdbool.h>\n#ifdef __cplusplus\nextern \"C\" {\n#endif\nvoid attn_entry(const float*, const float*, const float*, const bool*, float*);\n#ifdef __cplusplus\n}\n#endif\n";
      std::string fn = codegen::print_tile_function(k, "attn", o);
      ks.source = "#include \"kernel.h\"\n" + fn + "extern \"C\" void attn_entry(const float* q, const float* k, const float* v, const bool* m, float* o) { attn(q, k, v, " + (causal ? "m, " : "") + "o); }\n";
      runtime::CompileOptions opts;
      opts.flags = {"-O2", "-ffp-contract=off", "-fPIC", "-shared", "-fopenmp"};
      if (bits >= 256) opts.flags.insert(opts.flags.end(), {"-mavx2", "-mfma"});
      if (bits == 512) opts.flags.insert(opts.flags.end(), {"-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq"});
      std::string so = runtime::compile_shared(ks, opts);
      runtime::LoadedKernel kern(so, "attn_entry");
      std::vector<float> q(c.q.begin(), c.q.end()), kk(c.k.begin(), c.k.end()), vv(c.v.begin(), c.v.end());
      std::vector<char> mask(c.mask.size() + 1);
      for (size_t i = 0; i < c.mask.size(); ++i) mask[i] = c.mask[i] != 0;
      std::vector<float> out(c.a.batch * c.a.M * c.a.Dv, NAN);
      kern.call({q.data(), kk.data(), vv.data(), mask.data(), out.data()});
      std::vector<double> want = reference(c);
      const double spread = 2 * score_rounding(c) * 2;
      int bad = 0;
      for (size_t i = 0; i < out.size(); ++i)
        if (!(std::fabs(out[i] - want[i]) <= 1e-5 * (1 + std::fabs(want[i])) + spread) && bad++ < 3)
          ADD_FAILURE() << bits << " bits, causal " << causal << ", splits " << splits << ": element " << i << " = " << out[i] << ", want " << want[i];
      EXPECT_EQ(bad, 0);
    }
  }
}

}  // namespace
}  // namespace axon::tile
