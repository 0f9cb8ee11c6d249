// The naive C++ kernel against the reference interpreter: every op of
// ops.def is built into a graph, emitted, compiled, run on random inputs
// (with NaN, infinities, signed zeros and ties mixed in) and compared with
// verify::interpret. Plus the pieces the emitter is made of: CIndex folding,
// CScalar literals, the kernel ABI's names and header.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>

#include <unistd.h>

#include "codegen/c_like/c_index.h"
#include "codegen/c_like/c_scalar.h"
#include "codegen/c_like/kernel_abi.h"
#include "codegen/c_like/naive_cpp.h"
#include "ir/element_def.h"
#include "ir/graph.h"
#include "ir/printer.h"
#include "runtime/compile_shared.h"
#include "runtime/loaded_kernel.h"
#include "verify/interpreter.h"

namespace axon {
namespace {

using namespace axon::ir;
using codegen::CIndex;
using codegen::CScalar;
using ir::Tensor;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- test harness: graphs in, compiled outputs and reference outputs out ----

const runtime::CompileOptions& options() {
  static const runtime::CompileOptions o = [] {
    runtime::CompileOptions o;
    o.cache_dir = (std::filesystem::path(testing::TempDir()) / "axon-codegen-test-cache").string();
    return o;
  }();
  return o;
}

Graph make_graph(const std::vector<std::pair<std::string, Type>>& params) {
  Graph g;
  g.entry = "kernel_under_test";
  for (const auto& [name, type] : params) g.params.push_back({name, type});
  return g;
}

// Buffer bytes of one element, from the interpreter's double.
void encode_one(DType d, double v, unsigned char* p) {
  switch (d) {
    case DType::Bool: *reinterpret_cast<bool*>(p) = v != 0; break;
    case DType::I32: { int32_t x = static_cast<int32_t>(v); std::memcpy(p, &x, 4); break; }
    case DType::I64: { int64_t x = static_cast<int64_t>(v); std::memcpy(p, &x, 8); break; }
    case DType::F16: { _Float16 x = static_cast<_Float16>(v); std::memcpy(p, &x, 2); break; }
    case DType::BF16: {
      float f = static_cast<float>(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      EXPECT_TRUE(std::isnan(f) || (b & 0xffffu) == 0) << v << " is not a bf16 value";
      uint16_t h = static_cast<uint16_t>(b >> 16);
      std::memcpy(p, &h, 2);
      break;
    }
    case DType::F32: { float x = static_cast<float>(v); std::memcpy(p, &x, 4); break; }
    case DType::F64: std::memcpy(p, &v, 8); break;
  }
}

double decode_one(DType d, const unsigned char* p) {
  switch (d) {
    case DType::Bool: { unsigned char b = *p; return b ? 1 : 0; }
    case DType::I32: { int32_t x; std::memcpy(&x, p, 4); return x; }
    case DType::I64: { int64_t x; std::memcpy(&x, p, 8); return static_cast<double>(x); }
    case DType::F16: { _Float16 x; std::memcpy(&x, p, 2); return static_cast<double>(x); }
    case DType::BF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      uint32_t b = static_cast<uint32_t>(h) << 16;
      float f;
      std::memcpy(&f, &b, 4);
      return f;
    }
    case DType::F32: { float x; std::memcpy(&x, p, 4); return x; }
    case DType::F64: { double x; std::memcpy(&x, p, 8); return x; }
  }
  return 0;
}

// `v` rounded to a value that dtype `d` holds exactly.
double representable(DType d, double v) {
  switch (d) {
    case DType::Bool: return v != 0;
    case DType::I32:
    case DType::I64: return std::trunc(v);
    case DType::F16: return static_cast<double>(static_cast<_Float16>(v));
    case DType::BF16: {
      float f = static_cast<float>(v);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      b &= 0xffff0000u;
      std::memcpy(&f, &b, 4);
      return f;
    }
    case DType::F32: return static_cast<float>(v);
    case DType::F64: return v;
  }
  return v;
}

Tensor random_tensor(const Type& t, std::mt19937& rng, double lo = -2, double hi = 2) {
  Tensor x{t, std::vector<double>(static_cast<size_t>(t.numel()))};
  std::uniform_real_distribution<double> u(lo, hi);
  std::uniform_int_distribution<int> i(static_cast<int>(lo), static_cast<int>(hi));
  for (double& v : x.data) {
    if (t.dtype == DType::Bool) v = i(rng) & 1;
    else if (is_integer(t.dtype)) v = i(rng);
    else v = representable(t.dtype, u(rng));
  }
  return x;
}

std::vector<Tensor> random_inputs(const Graph& g, uint32_t seed, double lo = -2, double hi = 2) {
  std::mt19937 rng(seed);
  std::vector<Tensor> in;
  for (const ParamInfo& p : g.params) in.push_back(random_tensor(p.type, rng, lo, hi));
  return in;
}

// Emits, compiles (through the cache), loads and runs `g` on `inputs`.
// Output buffers are poisoned first, so an element the kernel forgets shows.
std::vector<Tensor> run_compiled(const Graph& g, const std::vector<Tensor>& inputs) {
  codegen::KernelSource k = codegen::emit_naive_cpp(g);
  runtime::LoadedKernel kernel(runtime::compile_shared(k, options()), k.entry);
  std::vector<std::vector<unsigned char>> bufs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const DType d = g.params[i].type.dtype;
    const size_t w = static_cast<size_t>(dtype_bytes(d));
    bufs.emplace_back(std::max<size_t>(1, inputs[i].data.size()) * w);
    for (size_t j = 0; j < inputs[i].data.size(); ++j) encode_one(d, inputs[i].data[j], &bufs.back()[j * w]);
  }
  for (NodeId o : g.outputs) {
    const Type& t = g[o].type;
    bufs.emplace_back(std::max<int64_t>(1, t.numel()) * dtype_bytes(t.dtype), t.dtype == DType::Bool ? 0x01 : 0xff);
  }
  std::vector<void*> ptrs;
  for (auto& b : bufs) ptrs.push_back(b.data());
  kernel.call(ptrs);
  std::vector<Tensor> outs;
  for (size_t k2 = 0; k2 < g.outputs.size(); ++k2) {
    const Type& t = g[g.outputs[k2]].type;
    Tensor x{t, std::vector<double>(static_cast<size_t>(t.numel()))};
    const auto& b = bufs[inputs.size() + k2];
    for (size_t j = 0; j < x.data.size(); ++j) x.data[j] = decode_one(t.dtype, &b[j * dtype_bytes(t.dtype)]);
    outs.push_back(std::move(x));
  }
  return outs;
}

struct Tolerance {
  double rtol = 0, atol = 0;
};

// NaN matches NaN, infinities and exact values match themselves, the rest
// must lie within atol + rtol * |want|.
void expect_close(const Tensor& got, const Tensor& want, Tolerance tol, const std::string& what) {
  ASSERT_EQ(got.data.size(), want.data.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.data.size(); ++i) {
    double a = got.data[i], b = want.data[i];
    bool ok = (std::isnan(a) && std::isnan(b)) || a == b ||
              (std::isfinite(a) && std::isfinite(b) && std::fabs(a - b) <= tol.atol + tol.rtol * std::fabs(b));
    if (!ok && bad++ < 5)
      ADD_FAILURE() << what << " element " << i << ": got " << std::setprecision(17) << a << ", want " << b;
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << got.data.size() << " elements differ";
}

// Runs `g` compiled and interpreted and compares every output. Float outputs
// get `tol`; bool and integer outputs must match exactly.
void expect_matches_interpreter(const Graph& g, const std::vector<Tensor>& inputs, Tolerance tol) {
  std::vector<Tensor> got = run_compiled(g, inputs);
  std::vector<Tensor> want = verify::interpret(g, inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    const Type& t = g[g.outputs[k]].type;
    Tolerance tk = is_float(t.dtype) ? tol : Tolerance{};
    expect_close(got[k], want[k], tk, "out" + std::to_string(k) + " " + print_node(g, g.outputs[k]));
  }
}

// f32 single ops: float libm functions are within a few ulp.
constexpr Tolerance kF32Map{2e-6, 1e-7};
// Short f32 reductions (at most a few dozen terms of magnitude <= 2).
constexpr Tolerance kF32Sum{1e-5, 1e-5};

// ---- every op against the interpreter ----

TEST(codegen, ElementwiseMapsWithSpecialValues) {
  const Type t{DType::F32, {6, 7}};
  Graph g = make_graph({{"X", t}, {"Y", t}});
  NodeId x = param(g, 0), y = param(g, 1);
  for (Op op : {Op::Neg, Op::Abs, Op::Exp, Op::Log, Op::Sqrt, Op::Tanh, Op::Sin, Op::Cos, Op::Floor})
    g.outputs.push_back(unary(g, op, x));
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Pow, Op::Maximum, Op::Minimum})
    g.outputs.push_back(binary(g, op, x, y));
  std::vector<Tensor> in = random_inputs(g, 1, -3, 3);
  auto& X = in[0].data;
  auto& Y = in[1].data;
  X[0] = kNaN;                 // NaN on the left of maximum/minimum
  Y[1] = kNaN;                 // and on the right
  X[2] = kInf;
  Y[3] = -kInf;
  X[4] = -0.0, Y[4] = 0.0;     // signed zeros
  X[5] = Y[5] = 1.25;          // a tie
  X[6] = 0;                    // log(0) = -inf
  Y[7] = 0;                    // division by zero
  X[8] = kNaN, Y[8] = kNaN;
  expect_matches_interpreter(g, in, kF32Map);
}

TEST(codegen, ComparisonsLogicalAndSelect) {
  const Type t{DType::F32, {5, 6}};
  Graph g = make_graph({{"X", t}, {"Y", t}});
  NodeId x = param(g, 0), y = param(g, 1);
  std::vector<NodeId> cmp;
  for (Op op : {Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::Eq, Op::Ne}) cmp.push_back(binary(g, op, x, y));
  g.outputs = cmp;
  g.outputs.push_back(binary(g, Op::And, cmp[0], cmp[5]));
  g.outputs.push_back(binary(g, Op::Or, cmp[4], cmp[2]));
  g.outputs.push_back(unary(g, Op::Not, cmp[1]));
  g.outputs.push_back(select(g, cmp[0], x, y));
  std::vector<Tensor> in = random_inputs(g, 2);
  for (size_t i = 0; i < in[0].data.size(); i += 3) in[1].data[i] = in[0].data[i];  // ties
  in[0].data[1] = kNaN;  // every comparison with NaN is false but ne
  in[1].data[2] = kNaN;
  expect_matches_interpreter(g, in, Tolerance{});
}

TEST(codegen, PowWithLiteralExponents) {
  const Type t{DType::F32, {4, 5}};
  Graph g = make_graph({{"X", t}});
  NodeId x = param(g, 0);
  auto pow_by = [&](double e) { return binary(g, Op::Pow, x, broadcast(g, reshape(g, constant(g, e, DType::F32), {1, 1}), t.shape)); };
  g.outputs = {pow_by(2), pow_by(0), pow_by(1), pow_by(-1), pow_by(3), pow_by(0.5)};
  std::vector<Tensor> in = random_inputs(g, 3, -3, 3);
  in[0].data[0] = kNaN;
  in[0].data[1] = -0.0;
  in[0].data[2] = -kInf;

  codegen::KernelSource k = codegen::emit_naive_cpp(g);
  EXPECT_EQ(k.source.find("unique_ptr"), std::string::npos) << "literal exponents are not materialised";
  size_t first = k.source.find("powf(");
  EXPECT_NE(first, std::string::npos);
  EXPECT_EQ(k.source.find("powf(", first + 1), std::string::npos) << "only x**0.5 calls powf";
  std::vector<Tensor> got = run_compiled(g, in);
  std::vector<Tensor> want = verify::interpret(g, in);
  // x**2 is one multiply, rounded once: exactly float(x*x).
  for (size_t i = 0; i < got[0].data.size(); ++i) {
    double w = static_cast<float>(want[0].data[i]);
    EXPECT_TRUE(got[0].data[i] == w || (std::isnan(w) && std::isnan(got[0].data[i])))
        << "x**2 at " << i << ": got " << got[0].data[i] << ", want " << w;
  }
  for (size_t o = 1; o < got.size(); ++o)
    expect_close(got[o], want[o], kF32Map, "out" + std::to_string(o) + " " + print_node(g, g.outputs[o]));
}

TEST(codegen, CastsBetweenAllDtypes) {
  Graph g = make_graph({{"X", {DType::F32, {24}}}, {"I", {DType::I32, {8}}}, {"B", {DType::Bool, {8}}},
                        {"D", {DType::F64, {8}}}, {"H", {DType::F16, {8}}}});
  NodeId x = param(g, 0), i = param(g, 1), b = param(g, 2), d = param(g, 3), h = param(g, 4);
  for (DType to : {DType::Bool, DType::I32, DType::I64, DType::F16, DType::BF16, DType::F64})
    g.outputs.push_back(cast(g, x, to));
  for (DType to : {DType::F32, DType::F16, DType::Bool, DType::I64}) g.outputs.push_back(cast(g, i, to));
  for (DType to : {DType::F32, DType::I32, DType::F16}) g.outputs.push_back(cast(g, b, to));
  for (DType to : {DType::F32, DType::F16, DType::I32}) g.outputs.push_back(cast(g, d, to));
  for (DType to : {DType::F32, DType::BF16, DType::Bool}) g.outputs.push_back(cast(g, h, to));

  std::vector<Tensor> in = random_inputs(g, 4, -50, 50);
  // Ties and edges of f16 (11 bits) and bf16 (8 bits), subnormals, overflow.
  const std::vector<double> xs = {0.0, -0.0, 0.5, -2.75, 1 + std::ldexp(1, -11), 1 + 3 * std::ldexp(1, -11),
                                  1 + std::ldexp(1, -8), 1 + 3 * std::ldexp(1, -8), 3e-6, 1e-8, 65504, 65519,
                                  65520, 1e6, -1e6, 123456.7, 7.999999, -7.999999};
  for (size_t j = 0; j < xs.size(); ++j) in[0].data[j] = static_cast<float>(xs[j]);
  in[1].data[0] = 2147483647;  // f32 and f16 of a large integer
  in[1].data[1] = -16777217;
  // f64 values that a rounding through float would get wrong for f16.
  in[3].data[0] = 1 + std::ldexp(1, -11) + std::ldexp(1, -40);
  in[3].data[1] = -(1 + std::ldexp(1, -11) + std::ldexp(1, -40));
  in[3].data[2] = 0.1;
  in[3].data[3] = 70000.5;  // beyond f16
  in[3].data[4] = std::ldexp(1, -25) + std::ldexp(1, -60);  // just above half the smallest f16 subnormal
  in[4].data[0] = kInf;
  in[4].data[1] = -kInf;
  expect_matches_interpreter(g, in, Tolerance{});
}

// The interpreter's round_to_bf16 rounds a double to float first, which can
// round twice (1 + 2^-8 + 2^-30 becomes the tie 1 + 2^-8, then 1). The kernel
// rounds once; this checks it against a reference computed here.
TEST(codegen, CastF64ToBf16RoundsOnce) {
  Graph g = make_graph({{"D", {DType::F64, {6}}}});
  g.outputs = {cast(g, param(g, 0), DType::BF16)};
  Tensor d{{DType::F64, {6}},
           {1 + std::ldexp(1, -8) + std::ldexp(1, -30), 1 + std::ldexp(1, -8), 1 + 3 * std::ldexp(1, -8),
            -(1 + std::ldexp(1, -8) + std::ldexp(1, -40)), 0.1, 1e39}};
  std::vector<Tensor> got = run_compiled(g, {d});
  auto nearest_bf16 = [](double x) {
    // The two bf16 neighbours of x, and the nearer (ties to the even one).
    float f = static_cast<float>(x);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    b &= 0xffff0000u;
    float lo, hi;
    std::memcpy(&lo, &b, 4);
    if (std::fabs(static_cast<double>(lo)) > std::fabs(x)) { b -= 0x10000u; std::memcpy(&lo, &b, 4); }
    uint32_t bl;
    std::memcpy(&bl, &lo, 4);
    uint32_t bh = bl + 0x10000u;
    std::memcpy(&hi, &bh, 4);
    double dl = std::fabs(x - lo), dh = std::fabs(hi - x);  // exact: neighbours within a factor 2
    if (dl != dh) return dl < dh ? static_cast<double>(lo) : static_cast<double>(hi);
    return (bl & 0x10000u) ? static_cast<double>(hi) : static_cast<double>(lo);
  };
  for (size_t j = 0; j < 5; ++j) EXPECT_EQ(got[0].data[j], nearest_bf16(d.data[j])) << "element " << j;
  EXPECT_EQ(got[0].data[5], kInf);  // above the largest bf16
}

TEST(codegen, Float16AndBfloat16Arithmetic) {
  const Type h{DType::F16, {4, 8}}, b{DType::BF16, {4, 8}};
  Graph g = make_graph({{"H", h}, {"G", h}, {"P", b}, {"Q", b}});
  NodeId x = param(g, 0), y = param(g, 1), p = param(g, 2), q = param(g, 3);
  g.outputs = {binary(g, Op::Add, x, y),      binary(g, Op::Mul, x, y),    unary(g, Op::Exp, x),
               binary(g, Op::Maximum, x, y),  reduce(g, Op::ReduceSum, x, {1}),
               einsum(g, "ij,kj->ik", x, y),  binary(g, Op::Div, p, q),     unary(g, Op::Tanh, p),
               reduce(g, Op::ReduceMax, p, {0}), iota(g, {3, 5}, 1, DType::F16)};
  std::vector<Tensor> in = random_inputs(g, 5);
  in[0].data[3] = kNaN;
  // One rounding of the result to f16 (2^-11) or bf16 (2^-8) relative; the
  // sums accumulate in float and round once at the end.
  std::vector<Tensor> got = run_compiled(g, in);
  std::vector<Tensor> want = verify::interpret(g, in);
  for (size_t k = 0; k < got.size(); ++k) {
    bool bf = g[g.outputs[k]].type.dtype == DType::BF16;
    Tolerance tol = bf ? Tolerance{4e-3, 1e-6} : Tolerance{5e-4, 1e-6};
    if (g[g.outputs[k]].op == Op::Einsum || g[g.outputs[k]].op == Op::ReduceSum) tol.atol = 4e-3;
    expect_close(got[k], want[k], tol, "out" + std::to_string(k) + " " + print_node(g, g.outputs[k]));
  }
}

TEST(codegen, Reductions) {
  Graph g = make_graph({{"X", {DType::F32, {4, 5, 6}}}, {"I", {DType::I32, {3, 4}}}, {"B", {DType::Bool, {6, 3}}}});
  NodeId x = param(g, 0), i = param(g, 1), b = param(g, 2);
  g.outputs = {reduce(g, Op::ReduceSum, x, {1}),       reduce(g, Op::ReduceSum, x, {0, 2}),
               reduce(g, Op::ReduceSum, x, {0, 1, 2}), reduce(g, Op::ReduceMax, x, {2}),
               reduce(g, Op::ReduceMin, x, {0}),       reduce(g, Op::ReduceMax, x, {0, 1, 2}),
               reduce(g, Op::ReduceMax, i, {1}),       reduce(g, Op::ReduceMin, i, {0}),
               reduce(g, Op::ReduceSum, i, {0, 1}),    reduce(g, Op::ReduceMax, b, {1}),
               reduce(g, Op::ReduceMin, b, {1})};
  std::vector<Tensor> in = random_inputs(g, 6, -20, 20);
  in[2].data = {0, 0, 0, 1, 1, 1, 0, 1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 0};  // rows: none, all, some
  for (double& v : in[0].data) v = static_cast<float>(v / 10);
  for (int k = 0; k < 6; ++k) in[0].data[k] = -kInf;  // the row X[0, 0, :] is all -inf
  in[0].data[1 * 30 + 2 * 6 + 3] = kNaN;               // NaN wins max and min
  in[0].data[2 * 30 + 4 * 6 + 5] = kInf;
  expect_matches_interpreter(g, in, kF32Sum);
}

TEST(codegen, ReductionsOverNothing) {
  Graph g = make_graph({{"E", {DType::F32, {3, 0}}}});
  NodeId e = param(g, 0);
  g.outputs = {reduce(g, Op::ReduceSum, e, {1}), reduce(g, Op::ReduceMax, e, {1}),
               reduce(g, Op::ReduceMin, e, {1}), einsum(g, "ij,kj->ik", e, e), reduce(g, Op::ReduceSum, e, {0})};
  expect_matches_interpreter(g, {Tensor{{DType::F32, {3, 0}}, {}}}, Tolerance{});
}

TEST(codegen, Einsums) {
  Graph g = make_graph({{"A", {DType::F32, {5, 7}}},    {"B", {DType::F32, {7, 3}}},
                        {"P", {DType::F32, {2, 4, 6}}}, {"Q", {DType::F32, {2, 6, 3}}},
                        {"S", {DType::F32, {4, 4}}},    {"v", {DType::F32, {4}}},
                        {"u", {DType::F32, {9}}},       {"w", {DType::F32, {9}}},
                        {"C", {DType::F32, {3, 7}}},    {"R", {DType::F32, {4, 6}}}});
  NodeId A = param(g, 0), B = param(g, 1), P = param(g, 2), Q = param(g, 3), S = param(g, 4), v = param(g, 5),
         u = param(g, 6), w = param(g, 7), C = param(g, 8), R = param(g, 9);
  g.outputs = {einsum(g, "ij,jk->ik", A, B),    einsum(g, "bij,bjk->bik", P, Q), einsum(g, "ii,i->i", S, v),
               einsum(g, "i,i->", u, w),        einsum(g, "i,j->ij", u, v),      einsum(g, "ij,kj->ik", A, C),
               einsum(g, "bij,ij->b", P, R),    einsum(g, "ii,i->", S, v),       einsum(g, "ij,jk->ki", A, B)};
  expect_matches_interpreter(g, random_inputs(g, 7), kF32Sum);
}

TEST(codegen, LayoutOps) {
  Graph g = make_graph({{"X", {DType::F32, {3, 4}}},    {"R", {DType::F32, {1, 4}}},
                        {"C", {DType::F32, {3, 1}}},    {"T", {DType::F32, {2, 3, 4}}},
                        {"M", {DType::F32, {2, 1, 4}}}, {"Y", {DType::F32, {3, 2}}},
                        {"Z", {DType::F32, {3, 5}}},    {"K", {DType::I32, {2, 6}}}});
  NodeId X = param(g, 0), R = param(g, 1), C = param(g, 2), T = param(g, 3), M = param(g, 4), Y = param(g, 5),
         Z = param(g, 6), K = param(g, 7);
  g.outputs = {
      broadcast(g, R, {3, 4}),
      broadcast(g, C, {3, 4}),
      broadcast(g, M, {2, 3, 4}),
      reshape(g, X, {2, 6}),
      reshape(g, X, {12}),
      reshape(g, X, {4, 3, 1}),
      reshape(g, reshape(g, X, {2, 6}), {3, 2, 2}),
      reshape(g, T, {6, 4}),
      reshape(g, K, {3, 4}),
      transpose(g, T, {2, 0, 1}),
      transpose(g, X, {1, 0}),
      slice(g, X, {2, 3}, {-1, -2}, {3, 2}),
      slice(g, T, {1, 0, 1}, {-1, 2, 2}, {2, 2, 2}),
      slice(g, X, {0, 1}, {2, 1}, {2, 3}),
      concat(g, {X, Y, Z}, 1),
      concat(g, {X, R, X}, 0),
      iota(g, {3, 4}, 1, DType::F32),
      iota(g, {2, 3}, 0, DType::I32),
      iota(g, {2, 3, 2}, 2, DType::I64),
  };
  expect_matches_interpreter(g, random_inputs(g, 8, -9, 9), Tolerance{});
}

TEST(codegen, ReshapesBetweenManyFactorings) {
  Graph g = make_graph({{"X", {DType::F32, {2, 3, 4, 5}}}});
  NodeId x = param(g, 0);
  for (const Shape& s : std::vector<Shape>{{6, 20}, {4, 30}, {120}, {5, 24}, {2, 60}, {10, 12}, {3, 8, 5},
                                           {4, 3, 10}, {2, 2, 2, 15}, {1, 120, 1}, {5, 4, 3, 2}, {8, 15}})
    g.outputs.push_back(reshape(g, x, s));
  codegen::KernelSource k = codegen::emit_naive_cpp(g);
  // Row-major order is kept, and the index arithmetic folds back to it.
  EXPECT_EQ(k.source.find(" / "), std::string::npos) << k.source;
  EXPECT_EQ(k.source.find(" % "), std::string::npos) << k.source;
  expect_matches_interpreter(g, random_inputs(g, 12), Tolerance{});
}

TEST(codegen, OutputsThatAreParamsDuplicatesOrConstants) {
  Graph g = make_graph({{"X", {DType::F32, {3}}}, {"unused", {DType::F32, {2}}}});
  NodeId x = param(g, 0);
  NodeId e = unary(g, Op::Exp, x);
  NodeId ninf = constant(g, -kInf, DType::F32);
  g.outputs = {x,
               e,
               e,
               constant(g, 1.5, DType::F32),
               broadcast(g, reshape(g, ninf, {1}), {3}),
               reduce(g, Op::ReduceMax, broadcast(g, reshape(g, ninf, {1}), {3}), {0}),
               constant(g, kNaN, DType::F32),
               constant(g, 0.1, DType::F64),
               constant(g, -0.0, DType::F32),
               cast(g, constant(g, 2.5, DType::F32), DType::I32),
               x};
  std::vector<Tensor> in = random_inputs(g, 9);
  std::vector<Tensor> got = run_compiled(g, in);
  std::vector<Tensor> want = verify::interpret(g, in);
  for (size_t k = 0; k < got.size(); ++k)
    expect_close(got[k], want[k], kF32Map, "out" + std::to_string(k) + " " + print_node(g, g.outputs[k]));
  EXPECT_TRUE(std::signbit(got[8].data[0])) << "-0.0 keeps its sign";
  EXPECT_EQ(got[7].data[0], 0.1) << "an f64 literal prints exactly";
}

TEST(codegen, UnusualParameterNamesBecomeSafeIdentifiers) {
  const Type t{DType::F32, {2, 3}};
  Graph g = make_graph({{"out0", t}, {"i0", t}, {"float", t}, {"x y", t}, {"2d", t}, {"acc", t}, {"x", t},
                        {"t3_buf", t}, {"expf", t}, {"x_y", t}, {"acc1_2", t}, {"nan", t}, {"rg", t}, {"accx", t}});
  NodeId s = param(g, 0);
  for (int i = 1; i < 14; ++i) s = binary(g, Op::Add, s, param(g, i));
  g.outputs = {unary(g, Op::Exp, s)};
  g.entry = "my-block";
  codegen::KernelAbi abi = codegen::make_kernel_abi(g);
  EXPECT_EQ(abi.entry, "my_block");
  EXPECT_EQ(abi.param_names, (std::vector<std::string>{"out0_", "i0_", "float_", "x_y", "p_2d", "acc_", "x_",
                                                       "t3_buf_", "expf_", "x_y_", "acc1_2_", "nan_", "rg_",
                                                       "accx"}));
  expect_matches_interpreter(g, random_inputs(g, 10), Tolerance{1e-5, 1e-6});
}

// Names reserved by their prefix (axon_, AXON_, _X, __x) used to send the
// renaming into an endless loop of appended underscores.
TEST(codegen, NamesReservedByTheirPrefixGetALetterInFront) {
  EXPECT_EQ(codegen::c_identifier("axon_f"), "paxon_f");
  EXPECT_EQ(codegen::c_identifier("AXON_X"), "pAXON_X");
  EXPECT_EQ(codegen::c_identifier("__x"), "p__x");
  EXPECT_EQ(codegen::c_identifier("_Y"), "p_Y");
  const Type t{DType::F32, {3}};
  Graph g = make_graph({{"axon_in", t}, {"_a", t}});
  g.outputs = {binary(g, Op::Add, param(g, 0), param(g, 1))};
  g.entry = "axon_f";
  codegen::KernelAbi abi = codegen::make_kernel_abi(g);
  EXPECT_EQ(abi.entry, "paxon_f");
  EXPECT_EQ(abi.param_names, (std::vector<std::string>{"paxon_in", "p_a"}));
  expect_matches_interpreter(g, random_inputs(g, 4), Tolerance{1e-6, 1e-7});
}

TEST(codegen, HeaderIsPlainC) {
  Graph g = make_graph({{"X", {DType::F32, {4}}}, {"F", {DType::BF16, {4}}}, {"M", {DType::Bool, {4}}}});
  g.outputs = {unary(g, Op::Not, param(g, 2)), cast(g, param(g, 1), DType::F32), reduce(g, Op::ReduceSum, param(g, 0), {0})};
  codegen::KernelSource k = codegen::emit_naive_cpp(g);
  EXPECT_NE(k.header.find("#include <stdint.h>"), std::string::npos);
  EXPECT_NE(k.header.find("#include <stdbool.h>"), std::string::npos);
  EXPECT_NE(k.header.find("extern \"C\""), std::string::npos);
  EXPECT_NE(k.header.find("void kernel_under_test(const float* X, const uint16_t* F, const bool* M, bool* out0, "
                          "float* out1, float* out2);"),
            std::string::npos)
      << k.header;
  EXPECT_NE(k.header.find("//   out2  f32[]"), std::string::npos) << "every buffer's shape is listed";
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / ("axon-codegen-header-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "kernel.h") << k.header;
  std::ofstream(dir / "use.c") << "#include \"kernel.h\"\nint main(void) { return 0; }\n";
  if (std::system("cc --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no C compiler (cc) to check the header with";
  std::string cmd = "cc -std=c99 -Wall -Werror -fsyntax-only " + (dir / "use.c").string();
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

TEST(codegen, LoopNestsFollowTheirContract) {
  Graph g = make_graph({{"X", {DType::F32, {5, 7}}}, {"W", {DType::F32, {7, 3}}}});
  NodeId m = einsum(g, "ij,jk->ik", param(g, 0), param(g, 1));
  NodeId r = reduce(g, Op::ReduceSum, unary(g, Op::Exp, m), {1});
  g.outputs = {r};
  codegen::KernelSource k = codegen::emit_naive_cpp(g);
  const std::string& s = k.source;
  // One commented nest per node, the comment being the printer's line.
  for (NodeId id = 2; id < g.size(); ++id)
    EXPECT_NE(s.find("// " + print_node(g, id) + "\n"), std::string::npos) << print_node(g, id);
  // i, k, j: the reduction loop sits between the two output loops and the
  // innermost loop walks both the output and W contiguously.
  size_t i0 = s.find("for (int64_t i0 = 0; i0 < 5; ++i0)");
  size_t r0 = s.find("for (int64_t r0 = 0; r0 < 7; ++r0)", i0);
  size_t i1 = s.find("for (int64_t i1 = 0; i1 < 3; ++i1)", r0);
  EXPECT_TRUE(i0 != std::string::npos && r0 != std::string::npos && i1 != std::string::npos) << s;
  EXPECT_NE(s.find("t2[i0 * 3 + i1] = (t2[i0 * 3 + i1] + (X[i0 * 7 + r0] * W[r0 * 3 + i1]));"), std::string::npos) << s;
  // The reduction keeps an accumulator started by the identity.
  EXPECT_NE(s.find("float acc4 = 0.0f;"), std::string::npos) << s;
  EXPECT_NE(s.find("__restrict"), std::string::npos);
  EXPECT_EQ(s.find("#pragma"), std::string::npos);
  EXPECT_EQ(s.find("axon_f16"), std::string::npos) << "no f16 helpers without f16 values";
  EXPECT_EQ(s.find("#include \"ir/"), std::string::npos) << "kernels do not depend on axon";
  EXPECT_NE(s.find("t2_buf.reset();"), std::string::npos) << "temporaries are freed after their last use";
  EXPECT_EQ(codegen::emit_naive_cpp(g).source, s) << "emission is deterministic";
}

// ---- the symbolic types ----

TEST(codegen, CIndexFoldsConstants) {
  CIndex i = CIndex::var("i0", 0, 9), j = CIndex::var("i1", 0, 3), z(0), one(1);
  EXPECT_EQ((z * i).str(), "0");
  EXPECT_EQ((i + z).str(), "i0");
  EXPECT_EQ((i * one).str(), "i0");
  EXPECT_EQ((CIndex(3) * CIndex(4)).str(), "12");
  EXPECT_EQ((i * CIndex(4) + j).str(), "i0 * 4 + i1");
  EXPECT_EQ((i * CIndex(2) - i * CIndex(2)).str(), "0");
  EXPECT_EQ((CIndex(9) - i * CIndex(2)).str(), "-i0 * 2 + 9");
  // Reshape's (flat / s) % n: multiples of s split off, small remainders vanish.
  CIndex flat = i * CIndex(4) + j;
  EXPECT_EQ((flat / CIndex(4)).str(), "i0");
  EXPECT_EQ((flat % CIndex(4)).str(), "i1");
  EXPECT_EQ(((flat / CIndex(4)) % CIndex(10)).str(), "i0");
  EXPECT_EQ((flat / CIndex(1)).str(), "i0 * 4 + i1");
  EXPECT_EQ((flat % CIndex(1)).str(), "0");
  EXPECT_EQ((flat / CIndex(8)).str(), "(i0 / 2)") << "i1 < 4 cannot carry into i0 * 4 / 8";
  EXPECT_EQ((flat % CIndex(8)).str(), "(i0 % 2) * 4 + i1");
  CIndex odd = i * CIndex(3) + j;
  EXPECT_EQ((odd / CIndex(8)).str(), "((i0 * 3 + i1) / 8)");
  EXPECT_EQ((odd % CIndex(8)).str(), "((i0 * 3 + i1) % 8)");
  EXPECT_EQ((CIndex(-7) / CIndex(2)).str(), "-4") << "floor division";
  EXPECT_EQ((CIndex(-7) % CIndex(2)).str(), "1");
  int64_t lo, hi;
  ASSERT_TRUE((odd % CIndex(8)).range(&lo, &hi));
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 7);
}

// What Reshape's operand_index (flatten, then unflatten with / and %) folds
// to, as the flat offset into the operand.
std::string reshape_offset(const Shape& from, const Shape& to) {
  Graph g = make_graph({{"X", {DType::F32, from}}});
  NodeId r = reshape(g, param(g, 0), to);
  std::vector<CIndex> o;
  for (size_t a = 0; a < to.size(); ++a)  // as the emitter: unit axes get no loop
    o.push_back(to[a] == 1 ? CIndex(0) : CIndex::var("i" + std::to_string(a), 0, to[a] - 1));
  std::vector<CIndex> idx = operand_index<CIndex>(g, g[r], 0, o, {});
  std::vector<int64_t> st = row_major_strides(from);
  CIndex off;
  for (size_t a = 0; a < idx.size(); ++a) off = off + idx[a] * CIndex(st[a]);
  return off.str();
}

TEST(codegen, CIndexFoldsReshapesBackToFlatOffsets) {
  EXPECT_EQ(reshape_offset({6, 4}, {3, 8}), "i0 * 8 + i1");
  EXPECT_EQ(reshape_offset({2, 3, 4}, {6, 4}), "i0 * 4 + i1");
  EXPECT_EQ(reshape_offset({4, 6}, {2, 3, 4}), "i0 * 12 + i1 * 4 + i2");
  EXPECT_EQ(reshape_offset({2, 3, 4}, {4, 6}), "i0 * 6 + i1");
  EXPECT_EQ(reshape_offset({64, 48}, {48, 64}), "i0 * 64 + i1");
  EXPECT_EQ(reshape_offset({12}, {3, 4}), "i0 * 4 + i1");
  EXPECT_EQ(reshape_offset({3, 4}, {12}), "i0");
  EXPECT_EQ(reshape_offset({5}, {5, 1}), "i0");
  EXPECT_EQ(reshape_offset({}, {1, 1}), "0");
}

TEST(codegen, CScalarLiteralsPrintExactly) {
  EXPECT_EQ(CScalar::literal(0.1, DType::F32).expr(), "0.1f");
  EXPECT_EQ(CScalar::literal(2, DType::F32).expr(), "2.0f");
  EXPECT_EQ(CScalar::literal(-2.5, DType::F32).expr(), "(-2.5f)");
  EXPECT_EQ(CScalar::literal(-0.0, DType::F32).expr(), "(-0.0f)");
  EXPECT_EQ(CScalar::literal(kInf, DType::F32).expr(), "INFINITY");
  EXPECT_EQ(CScalar::literal(-kInf, DType::F32).expr(), "(-INFINITY)");
  EXPECT_EQ(CScalar::literal(kNaN, DType::F32).expr(), "NAN");
  EXPECT_EQ(CScalar::literal(0.1, DType::F64).expr(), "0.1");
  EXPECT_EQ(CScalar::literal(kInf, DType::F64).expr(), "(double)INFINITY");
  EXPECT_EQ(CScalar::literal(1e-45, DType::F32).expr(), "1e-45f");
  EXPECT_EQ(CScalar::literal(0.1, DType::F16).literal_value(), 0.0999755859375);
  EXPECT_EQ(CScalar::literal(-kInf, DType::I32).expr(), "INT32_MIN");
  EXPECT_EQ(CScalar::literal(kInf, DType::I64).expr(), "INT64_MAX");
  EXPECT_EQ(CScalar::literal(-3, DType::I64).expr(), "(int64_t)(-3)");
  EXPECT_EQ(CScalar::literal(2, DType::Bool).expr(), "true");
  EXPECT_EQ(CScalar::literal(-kInf, DType::Bool).expr(), "false") << "the identity of max over bools";
  EXPECT_EQ(cast_to(DType::Bool, CScalar::literal(-kInf, DType::F32)).expr(), "true") << "a cast is x != 0";
  // Every float prints as text that reads back as the same float.
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> bits;
  for (int n = 0; n < 2000; ++n) {
    uint32_t b = bits(rng);
    float f;
    std::memcpy(&f, &b, 4);
    if (!std::isfinite(f)) continue;
    std::string s = CScalar::literal(f, DType::F32).expr();
    std::string digits = s.front() == '(' ? s.substr(1, s.size() - 3) : s.substr(0, s.size() - 1);
    EXPECT_EQ(std::strtof(digits.c_str(), nullptr), f) << s;
  }
}

TEST(codegen, CScalarPrimitivesPrintTheComputeType) {
  CScalar f("a", DType::F32), d("b", DType::F64), h("c", DType::F16), i("k", DType::I32);
  EXPECT_EQ(exp(f).expr(), "expf(a)");
  EXPECT_EQ(exp(d).expr(), "exp(b)");
  EXPECT_EQ(exp(h).expr(), "expf(c)") << "f16 computes in float";
  EXPECT_EQ(abs_of(i).expr(), "(k < 0 ? -k : k)");
  EXPECT_EQ(pow_of(f, make_scalar(2, f)).expr(), "(a * a)");
  EXPECT_EQ(pow_of(f, make_scalar(2.5, f)).expr(), "powf(a, 2.5f)");
  EXPECT_EQ(is_nan(i).expr(), "false");
  EXPECT_EQ(where(logical_or(is_nan(i), gt(i, i)), i, i).expr(), "((k > k) ? k : k)");
  EXPECT_EQ(cast_to(DType::F16, d).expr(), "axon_round_f16(axon_f64_to_f32_odd(b))");
  EXPECT_EQ(cast_to(DType::Bool, f).expr(), "(a != 0)");
  EXPECT_EQ(cast_to(DType::F32, h).expr(), "c") << "an f16 value is a float already";
  EXPECT_EQ(codegen::load_conversion(DType::BF16, "p[0]"), "axon_bf16_to_f32(p[0])");
}

}  // namespace
}  // namespace axon
