// The compiled float64 reference (runtime/compiled_reference.h) against its
// definition, the interpreter: the float64 twin of a graph, compiled and run,
// equals verify::interpret exactly where no sum is reordered (elementwise
// ops, casts, max/min, layout ops) and within 1e-12 relative to the sum of
// the terms' magnitudes where one is (sums, einsums), on every op class and
// on four workloads of bench/workloads at reduced sizes.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "codegen/c_like/reference_cpp.h"
#include "frontend/spec.h"
#include "ir/graph.h"
#include "runtime/cache_key.h"
#include "runtime/compiled_reference.h"
#include "tile/passes/matmul_nests.h"
#include "transforms/pipeline.h"
#include "verify/error_budget.h"
#include "verify/float64_twin.h"
#include "verify/inputs.h"
#include "verify/interpreter.h"

using namespace axon;
using namespace axon::ir;

namespace {

// OpenMP kernels pull in libgomp; keep it loaded for the whole process.
const bool kGompPinned = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NODELETE) != nullptr;

// Values exactly representable in `d`, drawn from `lo`..`hi`.
Tensor uniform(const Type& t, double lo, double hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  Tensor x{t, std::vector<double>(static_cast<size_t>(t.numel()))};
  for (double& v : x.data) v = t.dtype == DType::F32 ? static_cast<float>(u(rng)) : u(rng);
  return x;
}

std::vector<Tensor> compiled_twin(const Graph& g, const std::vector<Tensor>& inputs) {
  runtime::CompiledGraph c(verify::float64_twin(g));
  return c.run(inputs);
}

// Bit-equal, NaN for NaN.
void expect_exact(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].data.size(), want[o].data.size()) << what << " output " << o;
    int64_t bad = 0;
    for (size_t i = 0; i < got[o].data.size(); ++i) {
      double a = got[o].data[i], b = want[o].data[i];
      if (!(a == b || (std::isnan(a) && std::isnan(b)))) {
        if (bad++ < 3) ADD_FAILURE() << what << " output " << o << " [" << i << "]: " << a << " vs " << b;
      }
    }
    EXPECT_EQ(bad, 0) << what << " output " << o;
  }
}

// |got - want| <= 1e-12 * scale per element (scale: the sum of the terms'
// magnitudes, or the value's own where larger).
void expect_close(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                  const std::vector<Tensor>& scale, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].data.size(), want[o].data.size()) << what << " output " << o;
    int64_t bad = 0;
    double worst = 0;
    for (size_t i = 0; i < got[o].data.size(); ++i) {
      double a = got[o].data[i], b = want[o].data[i];
      if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) {
        if (!(a == b || (std::isnan(a) && std::isnan(b))) && bad++ < 3)
          ADD_FAILURE() << what << " output " << o << " [" << i << "]: " << a << " vs " << b;
        continue;
      }
      double s = std::max(std::fabs(b), scale[o].data[i]);
      double rel = s > 0 ? std::fabs(a - b) / s : std::fabs(a - b);
      worst = std::max(worst, rel);
      if (rel > 1e-12 && bad++ < 3)
        ADD_FAILURE() << what << " output " << o << " [" << i << "]: " << a << " vs " << b << " scale " << s;
    }
    EXPECT_EQ(bad, 0) << what << " output " << o << ", worst relative difference " << worst;
    std::printf("%s output %zu: worst |compiled - interpreted| / scale = %.3g\n", what.c_str(), o, worst);
  }
}

std::vector<Tensor> absolute(std::vector<Tensor> xs) {
  for (Tensor& t : xs)
    for (double& v : t.data) v = std::fabs(v);
  return xs;
}

}  // namespace

TEST(compiled_reference, TwinTypes) {
  Graph g;
  g.params = {{"a", {DType::F16, {4}}}, {"n", {DType::I32, {4}}}, {"b", {DType::BF16, {4}}}};
  NodeId a = param(g, 0), n = param(g, 1), b = param(g, 2);
  NodeId s = binary(g, Op::Add, cast(g, a, DType::F32), cast(g, b, DType::F32));
  g.outputs = {cast(g, s, DType::BF16), binary(g, Op::Add, n, n), binary(g, Op::Lt, a, a), cast(g, s, DType::F64)};
  Graph t = verify::float64_twin(g);
  EXPECT_EQ(t.entry, g.entry + "_f64");
  EXPECT_EQ(t.params[0].type.dtype, DType::F64);
  EXPECT_EQ(t.params[1].type.dtype, DType::I32);
  EXPECT_EQ(t.params[2].type.dtype, DType::F64);
  EXPECT_EQ(t[t.outputs[0]].type.dtype, DType::F64);
  EXPECT_EQ(t[t.outputs[1]].type.dtype, DType::I32);
  EXPECT_EQ(t[t.outputs[2]].type.dtype, DType::Bool);
  EXPECT_EQ(t[t.outputs[3]].type.dtype, DType::F64);
  // The cast to bf16 survives as a rounding cast followed by a cast back.
  const Node& back = t[t.outputs[0]];
  ASSERT_EQ(back.op, Op::Cast);
  EXPECT_EQ(t[back.args[0]].type.dtype, DType::BF16);
  // The casts to f32 (the original's compute type) become casts to f32 and back too.
  int f32_casts = 0;
  for (const Node& x : t.nodes()) f32_casts += x.op == Op::Cast && x.type.dtype == DType::F32;
  EXPECT_EQ(f32_casts, 2);
}

TEST(compiled_reference, Elementwise) {
  ASSERT_TRUE(kGompPinned);
  Graph g;
  const Shape s = {37, 29};
  g.params = {{"a", {DType::F32, s}}, {"b", {DType::F32, s}}};
  NodeId a = param(g, 0), b = param(g, 1);  // a in [-3, 3], b in [0.5, 4]
  auto un = [&](Op op, NodeId x) { return unary(g, op, x); };
  auto bin = [&](Op op, NodeId x, NodeId y) { return binary(g, op, x, y); };
  NodeId c = broadcast(g, reshape(g, constant(g, 0.1, DType::F32), {1, 1}), s);
  g.outputs = {bin(Op::Add, a, b), bin(Op::Sub, a, b), bin(Op::Mul, a, b), bin(Op::Div, a, b),
               un(Op::Neg, a), un(Op::Abs, a), un(Op::Exp, a), un(Op::Log, b), un(Op::Sqrt, b),
               un(Op::Tanh, a), un(Op::Sin, a), un(Op::Cos, a), un(Op::Floor, a), bin(Op::Pow, b, a),
               bin(Op::Maximum, a, b), bin(Op::Minimum, a, b), bin(Op::Mul, c, a),
               select(g, bin(Op::Lt, a, un(Op::Neg, b)), un(Op::Exp, bin(Op::Mul, a, b)), un(Op::Tanh, b)),
               bin(Op::And, bin(Op::Ge, a, b), un(Op::Not, bin(Op::Eq, a, b))),
               bin(Op::Or, bin(Op::Le, a, b), bin(Op::Ne, a, b)), bin(Op::Gt, a, b)};
  std::vector<Tensor> in = {uniform({DType::F32, s}, -3, 3, 1), uniform({DType::F32, s}, 0.5, 4, 2)};
  expect_exact(compiled_twin(g, in), verify::interpret(g, in), "elementwise");
}

TEST(compiled_reference, Casts) {
  ASSERT_TRUE(kGompPinned);
  Graph g;
  g.params = {{"x", {DType::F64, {8}}}, {"a", {DType::F32, {8}}}};
  NodeId x = param(g, 0), a = param(g, 1);
  NodeId p = binary(g, Op::Mul, a, a);
  g.outputs = {cast(g, x, DType::F16), cast(g, x, DType::BF16), cast(g, x, DType::F32), cast(g, x, DType::I32),
               cast(g, x, DType::Bool), cast(g, p, DType::F16), cast(g, p, DType::BF16), cast(g, p, DType::I32),
               cast(g, cast(g, p, DType::F64), DType::F32)};
  // 1 + 2^-11 + 2^-40 lies just above the midpoint of two f16 values: one
  // rounding gives 1 + 2^-10, rounding through float first would give 1.
  std::vector<Tensor> in = {
      Tensor{{DType::F64, {8}}, {1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), 0.1, -2.75, 65519.9, 1e-9, -0.0, 3.999999, 1e6}},
      uniform({DType::F32, {8}}, -300, 300, 3)};
  std::vector<Tensor> got = compiled_twin(g, in), want = verify::interpret(g, in);
  expect_exact(got, want, "casts");
  EXPECT_EQ(want[0].data[0], 1 + std::ldexp(1.0, -10));
}

// A cast's rounding is kept: the rounding error of a cast, which a twin that
// dropped the cast would compute as 0.
TEST(compiled_reference, CastRoundingIsKept) {
  ASSERT_TRUE(kGompPinned);
  Graph g;
  g.params = {{"x", {DType::F64, {3}}}, {"a", {DType::F32, {3}}}, {"b", {DType::F32, {3}}}};
  NodeId x = param(g, 0);
  NodeId p = binary(g, Op::Mul, param(g, 1), param(g, 2));  // f32 in the graph, exact in f64
  g.outputs = {binary(g, Op::Sub, cast(g, cast(g, x, DType::F32), DType::F64), x),
               binary(g, Op::Sub, cast(g, cast(g, p, DType::F16), DType::F32), p)};
  std::vector<Tensor> in = {Tensor{{DType::F64, {3}}, {0.1, 1.0 / 3, 2.0 / 3}},
                            Tensor{{DType::F32, {3}}, {1.1f, 1.3f, 3.7f}},
                            Tensor{{DType::F32, {3}}, {1.7f, 2.9f, 0.3f}}};
  std::vector<Tensor> got = compiled_twin(g, in), want = verify::interpret(g, in);
  expect_exact(got, want, "cast rounding");
  for (int o = 0; o < 2; ++o)
    for (size_t i = 0; i < got[o].data.size(); ++i) EXPECT_NE(got[o].data[i], 0) << "output " << o << " [" << i << "] " << want[o].data[i];
  EXPECT_EQ(got[0].data[0], static_cast<double>(0.1f) - 0.1);
}

TEST(compiled_reference, Reductions) {
  ASSERT_TRUE(kGompPinned);
  Graph g;
  const Shape s = {6, 70, 50};
  g.params = {{"a", {DType::F32, s}}};
  NodeId a = param(g, 0);
  g.outputs = {reduce(g, Op::ReduceSum, a, {0}), reduce(g, Op::ReduceSum, a, {1, 2}),
               reduce(g, Op::ReduceSum, a, {0, 1, 2}), reduce(g, Op::ReduceSum, a, {2})};
  Graph m;
  m.params = g.params;
  NodeId b = param(m, 0);
  m.outputs = {reduce(m, Op::ReduceMax, b, {1}), reduce(m, Op::ReduceMax, b, {0, 2}),
               reduce(m, Op::ReduceMin, b, {2}), reduce(m, Op::ReduceMin, b, {0, 1})};
  std::vector<Tensor> in = {uniform({DType::F32, s}, -1, 1, 4)};
  // The sums are linear in a: the sums of |terms| are the same sums of |a|.
  expect_close(compiled_twin(g, in), verify::interpret(g, in), verify::interpret(g, absolute(in)), "sums");
  expect_exact(compiled_twin(m, in), verify::interpret(m, in), "max and min");
}

TEST(compiled_reference, Einsum) {
  ASSERT_TRUE(kGompPinned);
  Graph g;
  g.params = {{"a", {DType::F32, {3, 20, 3000}}}, {"b", {DType::F32, {3, 3000, 10}}}, {"c", {DType::F32, {20, 3000}}}};
  NodeId a = param(g, 0), b = param(g, 1), c = param(g, 2);
  g.outputs = {einsum(g, "bij,bjk->bik", a, b), einsum(g, "ij,ij->", c, c), einsum(g, "bij,ij->bi", a, c)};
  std::vector<Tensor> in = {uniform(g.params[0].type, -1, 1, 5), uniform(g.params[1].type, -1, 1, 6),
                            uniform(g.params[2].type, -1, 1, 7)};
  expect_close(compiled_twin(g, in), verify::interpret(g, in), verify::interpret(g, absolute(in)), "einsum");
}

// Float64 matrix products in register tiles (tile/passes/matmul_nests.h):
// every element is the interpreter's serial sum over k, bit for bit, in
// both forms of an einsum (i-k-j and dot product, B read through strides),
// batched, with edges in every dimension (rows not a multiple of the
// tile's 6, columns not of its 8, k over several slices of 256 with a
// remainder, columns over several blocks), with special values and signed
// zeros; the operands are packed into each thread's panels before the
// tiles read them.
TEST(compiled_reference, MatmulRegisterTiles) {
  ASSERT_TRUE(kGompPinned);
  Graph g;
  g.params = {{"a", {DType::F32, {13, 600}}},
              {"b", {DType::F32, {600, 300}}},
              {"bt", {DType::F32, {300, 600}}},
              {"x", {DType::F32, {3, 7, 70}}},
              {"y", {DType::F32, {3, 70, 24}}},
              {"v", {DType::F32, {7, 40}}},
              {"w", {DType::F32, {40, 1100}}}};
  NodeId a = param(g, 0), b = param(g, 1), bt = param(g, 2), x = param(g, 3), y = param(g, 4), v = param(g, 5),
         w = param(g, 6);
  // The last product spans three column blocks of kMatmulNC (512, 512, 76),
  // its last panel of B packed 4 columns wide.
  g.outputs = {einsum(g, "ik,kj->ij", a, b), einsum(g, "ik,jk->ij", a, bt), einsum(g, "bik,bkj->bij", x, y),
               einsum(g, "ik,kj->ij", a, binary(g, Op::Mul, b, b)), einsum(g, "ik,kj->ij", v, w)};
  std::vector<Tensor> in;
  for (size_t i = 0; i < g.params.size(); ++i) in.push_back(uniform(g.params[i].type, -1, 1, 20 + i));
  // Infinities and NaNs propagate through the chains as the interpreter's;
  // a row of zeros times negative values sums to +0 from the +0 start.
  in[0].data[5 * 600 + 3] = INFINITY;
  in[1].data[7 * 300 + 11] = NAN;
  for (int k = 0; k < 600; ++k) in[0].data[12 * 600 + k] = 0;
  for (int k = 0; k < 600; ++k) in[1].data[k * 300 + 2] = -std::fabs(in[1].data[k * 300 + 2]) - 0.5;
  EXPECT_LT(2 * tile::kMatmulNC, 1100) << "w no longer spans three column blocks";
  const Graph twin = verify::float64_twin(g);
  const std::string src = codegen::print_reference_cpp(twin, 2).source;
  EXPECT_NE(src.find("axon_dmm6x8<"), std::string::npos) << "no float64 register tile:\n" << src;
  std::vector<Tensor> got = compiled_twin(g, in), want = verify::interpret(g, in);
  expect_exact(got, want, "float64 register tiles");
  // Every one of the five products is a tiled Matmul of packed operands.
  int calls = 0;
  for (size_t at = src.find("axon_dmm6x8<1, 6, 8, 1>("); at != std::string::npos;
       at = src.find("axon_dmm6x8<1, 6, 8, 1>(", at + 1))
    ++calls;
  EXPECT_EQ(calls, 5) << src;
  EXPECT_TRUE(std::isnan(got[0].data[11]) && std::isinf(got[0].data[5 * 300 + 1]));
  // Row 12 times column 2: 600 terms of -0, summed from +0: +0.
  EXPECT_EQ(got[0].data[12 * 300 + 2], 0.0);
  EXPECT_FALSE(std::signbit(got[0].data[12 * 300 + 2]));
}

// The compiled reference's temporaries come from a pool it keeps across
// calls (codegen/c_like/tile_cpp.h, scratch_pool): a call takes the blocks
// the one before gave back, still holding that call's values, and two
// calls at once must never hold one block together. Every result, of calls
// in turn on different inputs and of two threads calling at once, is the
// interpreter's bit for bit: a temporary read before it is written, or a
// block handed to two calls, changes them.
TEST(compiled_reference, ScratchPoolAcrossCallsAndThreads) {
  ASSERT_TRUE(kGompPinned);
  Graph g;
  g.params = {{"x", {DType::F32, {96, 200}}}, {"y", {DType::F32, {200, 180}}}, {"z", {DType::F32, {180, 150}}}};
  NodeId x = param(g, 0), y = param(g, 1), z = param(g, 2);
  NodeId p = einsum(g, "ik,kj->ij", x, y);  // 96 x 180 doubles: a heap temporary
  g.outputs = {einsum(g, "ik,kj->ij", unary(g, Op::Tanh, p), z), binary(g, Op::Mul, p, p)};
  const Graph twin = verify::float64_twin(g);
  const std::string src = codegen::print_reference_cpp(twin, 2).source;
  EXPECT_NE(src.find("axon_pool_take("), std::string::npos) << "no temporary from the pool:\n" << src;
  EXPECT_EQ(src.find("std::aligned_alloc(64, "), src.find("std::aligned_alloc(64, bytes + 64)"))
      << "a temporary allocated outside the pool:\n" << src;
  runtime::CompiledGraph c(twin);
  std::vector<std::vector<Tensor>> in, want;
  for (uint64_t s = 0; s < 4; ++s) {
    const double r = 1.0 + 3.0 * static_cast<double>(s);
    in.push_back({uniform(g.params[0].type, -r, r, 40 + 3 * s), uniform(g.params[1].type, -1, 1, 41 + 3 * s),
                  uniform(g.params[2].type, -1, 1, 42 + 3 * s)});
    want.push_back(verify::interpret(g, in.back()));
  }
  for (int round = 0; round < 2; ++round)
    for (size_t s = 0; s < in.size(); ++s)
      expect_exact(c.run(in[s]), want[s], "call in turn, round " + std::to_string(round) + ", set " + std::to_string(s));
  constexpr int kRounds = 6;
  std::vector<std::vector<Tensor>> got[2];
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) got[t].push_back(c.run(in[static_cast<size_t>(2 * t + r % 2)]));
    });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 2; ++t)
    for (int r = 0; r < kRounds; ++r)
      expect_exact(got[t][static_cast<size_t>(r)], want[static_cast<size_t>(2 * t + r % 2)],
                   "thread " + std::to_string(t) + ", round " + std::to_string(r));
}

TEST(compiled_reference, LayoutConcatIota) {
  ASSERT_TRUE(kGompPinned);
  Graph g;
  g.params = {{"a", {DType::F32, {5, 7}}}, {"n", {DType::I32, {5, 7}}}};
  NodeId a = param(g, 0), n = param(g, 1);
  NodeId io = iota(g, {5, 7}, 1, DType::F32);
  g.outputs = {transpose(g, a, {1, 0}), slice(g, a, {4, 6}, {-1, -3}, {5, 3}), reshape(g, a, {7, 5}),
               broadcast(g, reshape(g, reduce(g, Op::ReduceMax, a, {1}), {5, 1}), {5, 7}),
               concat(g, {a, io, transpose(g, reshape(g, a, {7, 5}), {1, 0})}, 0), concat(g, {n, n}, 1),
               binary(g, Op::Mul, io, a), iota(g, {3, 4}, 0, DType::I32),
               binary(g, Op::Add, cast(g, n, DType::F32), a)};
  std::vector<Tensor> in = {uniform(g.params[0].type, -5, 5, 8), Tensor{g.params[1].type, {}}};
  for (int i = 0; i < 35; ++i) in[1].data.push_back(i * 7 % 11 - 5);
  expect_exact(compiled_twin(g, in), verify::interpret(g, in), "layout");
}

namespace {

// A workload of bench/workloads with every size in its annotations reduced.
Graph small_workload(const std::string& name) {
  std::ifstream f(std::string(AXON_SOURCE_DIR) + "/bench/workloads/" + name + ".py");
  std::stringstream ss;
  ss << f.rdbuf();
  std::string src = ss.str();
  const std::map<std::string, std::string> smaller = {{"16", "2"},   {"64", "16"},   {"256", "8"},
                                                       {"1024", "40"}, {"2816", "56"}, {"4096", "96"}};
  std::regex annotation("\"f32\\[([0-9, ]+)\\]\"");
  std::string out;
  auto it = std::sregex_iterator(src.begin(), src.end(), annotation);
  size_t last = 0;
  for (; it != std::sregex_iterator(); ++it) {
    out += src.substr(last, static_cast<size_t>(it->position()) - last);
    std::string dims = (*it)[1], shrunk;
    std::stringstream ds(dims);
    for (std::string d; std::getline(ds, d, ',');) {
      d.erase(0, d.find_first_not_of(' '));
      shrunk += (shrunk.empty() ? "" : ", ") + (smaller.count(d) ? smaller.at(d) : d);
    }
    out += "\"f32[" + shrunk + "]\"";
    last = static_cast<size_t>(it->position() + it->length());
  }
  out += src.substr(last);
  frontend::SpecOptions o;
  return transforms::run_pipeline(frontend::parse_spec(name + ".py", out, o).graph);
}

void expect_workload(const std::string& name) {
  Graph g = small_workload(name);
  runtime::ReferenceEvaluator compiled(g, runtime::ReferenceEvaluator::Path::Compiled);
  for (uint64_t seed : {1, 2}) {
    std::vector<Tensor> in = verify::random_inputs(g, seed);
    verify::ReferenceWithBounds want = verify::reference_with_bounds(g, in);
    verify::ReferenceWithBounds got = compiled.evaluate(in);
    ASSERT_EQ(compiled.path(), runtime::ReferenceEvaluator::Path::Compiled) << compiled.failure();
    // The bound E of an f32 output is about u32 * (the sum of its terms'
    // magnitudes, grown by the summation factor): E / u32 bounds that sum.
    std::vector<Tensor> scale = want.bounds;
    for (Tensor& t : scale)
      for (double& v : t.data) v = v / std::ldexp(1.0, -24);
    expect_close(got.reference, want.reference, scale, name + " reference");
    expect_close(got.bounds, want.bounds, want.bounds, name + " bounds");
  }
}

}  // namespace

TEST(compiled_reference, WorkloadAttention) { expect_workload("m5_attention"); }

// The twin's contractions read stored operands: K^T is stored once (no
// line multiplies Q by K read through strides), the elementwise rows are
// `omp simd` loops and the products float64 register tiles
// (tile/passes/matmul_nests.h). expect_workload above checks the values
// against the interpreter.
TEST(compiled_reference, ContractionOperandsStoredAsVectorRows) {
  Graph g = verify::float64_twin(verify::reference_with_bounds_graph(small_workload("m5_attention")));
  const std::string src = codegen::print_reference_cpp(g, 2).source;
  std::istringstream lines(src);
  int strided_products = 0, simd = 0;
  for (std::string l; std::getline(lines, l);) {
    strided_products += l.find("Q[") != std::string::npos && l.find("K[") != std::string::npos;
    simd += l.find("#pragma omp simd") != std::string::npos;
  }
  EXPECT_EQ(strided_products, 0) << src;
  EXPECT_GE(simd, 5) << src;
  // The products and their bounds (|Q| |K^T|, |P| |V|) are register tiles.
  int tiles = 0;
  for (size_t at = src.find("axon_dmm6x8<"); at != std::string::npos; at = src.find("axon_dmm6x8<", at + 1)) ++tiles;
  EXPECT_GE(tiles, 4) << src;
}
TEST(compiled_reference, WorkloadCausalAttention) { expect_workload("m6_causal_attention"); }
TEST(compiled_reference, WorkloadRmsnormMatmul) { expect_workload("m1_rmsnorm_matmul"); }
TEST(compiled_reference, WorkloadGatedMlp) { expect_workload("m3_gated_mlp"); }

// Small graphs keep the interpreter; big ones get the compiled twin, those
// dominated by einsums included.
TEST(compiled_reference, SwitchBySizeAndKind) {
  auto full = [](const std::string& name) {
    frontend::SpecOptions o;
    return transforms::run_pipeline(
        frontend::load_spec(std::string(AXON_SOURCE_DIR) + "/bench/workloads/" + name + ".py", o).graph);
  };
  Graph small = small_workload("m5_attention"), attention = full("m5_attention"), gelu = full("s5_gelu");
  Graph matmul = full("m1_rmsnorm_matmul");
  EXPECT_LT(runtime::interpreter_seconds_estimate(small), runtime::kCompiledReferenceSeconds);
  EXPECT_GT(runtime::interpreter_seconds_estimate(attention), runtime::kCompiledReferenceSeconds);
  EXPECT_GT(runtime::interpreter_seconds_estimate(matmul), runtime::kCompiledReferenceSeconds);
  EXPECT_FALSE(runtime::compiled_reference_preferred(small));
  EXPECT_TRUE(runtime::compiled_reference_preferred(attention));
  EXPECT_TRUE(runtime::compiled_reference_preferred(gelu));
  EXPECT_TRUE(runtime::compiled_reference_preferred(matmul));
  if (runtime::reference_path_setting() != "auto") GTEST_SKIP() << "AXON_REFERENCE is set";
  EXPECT_EQ(runtime::ReferenceEvaluator(small).path(), runtime::ReferenceEvaluator::Path::Interpreter);
  EXPECT_EQ(runtime::ReferenceEvaluator(attention).path(), runtime::ReferenceEvaluator::Path::Compiled);
  EXPECT_EQ(runtime::ReferenceEvaluator(matmul).path(), runtime::ReferenceEvaluator::Path::Compiled);
}

// A compiled path that cannot build falls back to the interpreter.
TEST(compiled_reference, FallsBackToTheInterpreter) {
  Graph g = small_workload("m1_rmsnorm_matmul");
  const char* old = std::getenv("AXON_CACHE_DIR");
  std::string saved = old ? old : "";
  setenv("AXON_CACHE_DIR", "/proc/axon-no-such-folder/cache", 1);
  runtime::ReferenceEvaluator e(g, runtime::ReferenceEvaluator::Path::Compiled);
  std::vector<Tensor> in = verify::random_inputs(g, 3);
  testing::internal::CaptureStderr();
  verify::ReferenceWithBounds got = e.evaluate(in);
  std::string err = testing::internal::GetCapturedStderr();
  if (old) setenv("AXON_CACHE_DIR", saved.c_str(), 1); else unsetenv("AXON_CACHE_DIR");
  EXPECT_EQ(e.path(), runtime::ReferenceEvaluator::Path::Interpreter);
  EXPECT_NE(e.failure(), "");
  EXPECT_NE(err.find("warning"), std::string::npos) << err;
  verify::ReferenceWithBounds want = verify::reference_with_bounds(g, in);
  expect_exact(got.reference, want.reference, "fallback reference");
  expect_exact(got.bounds, want.bounds, "fallback bounds");
}

// The printed twin is memoised in the kernel cache (reference-sources/):
// a second CompiledGraph of the same graph reads it back, one of another
// graph (a constant changed) prints its own, and a memo that does not read
// back whole (truncated) is printed again; every result is the
// interpreter's, bit for bit.
TEST(compiled_reference, PrintedTwinIsMemoisedByGraph) {
  ASSERT_TRUE(kGompPinned);
  namespace fs = std::filesystem;
  const fs::path cache = fs::path(testing::TempDir()) / ("axon_ref_memo_" + std::to_string(getpid()));
  fs::remove_all(cache);
  const char* old = std::getenv("AXON_CACHE_DIR");
  const std::string saved = old ? old : "";
  setenv("AXON_CACHE_DIR", cache.c_str(), 1);
  auto graph_with = [](double k) {
    Graph g;
    const Shape s = {19, 23};
    g.params = {{"a", {DType::F32, s}}};
    NodeId a = param(g, 0);
    NodeId c = broadcast(g, reshape(g, constant(g, k, DType::F32), {1, 1}), s);
    g.outputs = {unary(g, Op::Tanh, binary(g, Op::Mul, c, a))};
    return g;
  };
  auto memos = [&] {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(cache / "reference-sources")) files.push_back(e.path());
    return files;
  };
  std::vector<Tensor> in = {uniform({DType::F32, {19, 23}}, -3, 3, 5)};
  const Graph g1 = graph_with(0.5), g2 = graph_with(0.25);
  expect_exact(compiled_twin(g1, in), verify::interpret(g1, in), "first");
  ASSERT_EQ(memos().size(), 1u);
  const fs::path memo = memos()[0];
  const auto size = fs::file_size(memo);
  expect_exact(compiled_twin(g1, in), verify::interpret(g1, in), "memoised");
  EXPECT_EQ(memos().size(), 1u);
  expect_exact(compiled_twin(g2, in), verify::interpret(g2, in), "another constant");
  EXPECT_EQ(memos().size(), 2u);
  fs::resize_file(memo, size / 2);
  expect_exact(compiled_twin(g1, in), verify::interpret(g1, in), "truncated memo");
  EXPECT_EQ(fs::file_size(memo), size);
  if (old) setenv("AXON_CACHE_DIR", saved.c_str(), 1);
  else unsetenv("AXON_CACHE_DIR");
  fs::remove_all(cache);
}

// The memo's build key is a key of the bytes of the file that holds axon's
// code (here the test executable), the same on every call.
TEST(compiled_reference, CodeIdentityIsAKeyOfTheCodesFile) {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty());
  runtime::CacheKey k;
  k.add("axon code");
  k.add(bytes);
  EXPECT_EQ(runtime::executable_identity(), k.hex());
  EXPECT_EQ(runtime::executable_identity(), runtime::executable_identity());
}
