// The tile IR, program in -> program out: index folding and bounds, graph
// lowering against the graph interpreter, the verifier on hand-built
// ill-formed kernels, each pass checked by walking its result and by running
// both sides with tile::interpret, and the loops pipeline printed as C++,
// compiled with OpenMP and run.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <tuple>
#include <string>
#include <vector>

#include "codegen/c_like/naive_cpp.h"
#include "codegen/c_like/tile_cpp.h"
#include "ir/graph.h"
#include "runtime/compile_shared.h"
#include "runtime/loaded_kernel.h"
#include "support/diagnostic.h"
#include "tile/index.h"
#include "tile/interpret.h"
#include "tile/lower_graph.h"
#include "tile/passes/cascade_sums.h"
#include "tile/passes/exp2_scaled.h"
#include "tile/passes/fuse_loops.h"
#include "tile/passes/inline_maps.h"
#include "tile/passes/interchange_sums.h"
#include "tile/passes/mark_loops.h"
#include "tile/passes/parallel_sums.h"
#include "tile/passes/parallelize.h"
#include "tile/passes/prefetch_rows.h"
#include "tile/passes/reciprocal_divisors.h"
#include "tile/passes/vectorize.h"
#include "tile/pipeline.h"
#include "tile/print.h"
#include "tile/verify.h"
#include "tile_test_support.h"
#include "verify/interpreter.h"
#include "verify/kernel_io.h"
#include "runtime/run_check.h"

namespace axon {
namespace {

using test::problems_text;

using namespace axon::ir;
using tile::Index;
using tile::Interval;
using tile::Kernel;
using tile::LoopKind;
using tile::Scope;
using tile::Stmt;
using tile::StmtKind;
using tile::Value;
using ir::Tensor;

// ---- shared helpers ----

Graph make_graph(const std::vector<std::pair<std::string, Type>>& params) {
  Graph g;
  g.entry = "tile_kernel_under_test";
  for (const auto& [name, type] : params) g.params.push_back({name, type});
  return g;
}

double representable(DType d, double v) {
  switch (d) {
    case DType::F16: return static_cast<double>(static_cast<_Float16>(v));
    case DType::F32: return static_cast<float>(v);
    case DType::I32:
    case DType::I64: return std::trunc(v);
    case DType::Bool: return v > 0;
    default: return v;
  }
}

// The literal `c` at every element of `shape` (a 0-d constant reshaped to
// rank(shape) ones, then broadcast).
NodeId splat(Graph& g, double c, DType d, const Shape& shape) {
  return broadcast(g, reshape(g, constant(g, c, d), Shape(shape.size(), 1)), shape);
}

std::vector<Tensor> random_inputs(const Graph& g, uint32_t seed, double lo = -2, double hi = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<Tensor> in;
  for (const ParamInfo& p : g.params) {
    Tensor t{p.type, std::vector<double>(static_cast<size_t>(p.type.numel()))};
    for (double& v : t.data) v = representable(p.type.dtype, u(rng));
    in.push_back(std::move(t));
  }
  return in;
}

bool same_value(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Every element equal (NaN matches NaN).
void expect_exact(const std::vector<Tensor>& got, const std::vector<Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].data.size(), want[o].data.size()) << what << " output " << o;
    int bad = 0;
    for (size_t i = 0; i < got[o].data.size(); ++i)
      if (!same_value(got[o].data[i], want[o].data[i]) && bad++ < 3)
        ADD_FAILURE() << what << " output " << o << " element " << i << ": got " << got[o].data[i] << ", want "
                      << want[o].data[i];
    EXPECT_EQ(bad, 0) << what << " output " << o;
  }
}

// |got - want| <= atol + rtol |want| everywhere, and no NaN unless wanted.
void expect_close(const std::vector<Tensor>& got, const std::vector<Tensor>& want, double rtol, double atol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].data.size(), want[o].data.size()) << what << " output " << o;
    int bad = 0;
    for (size_t i = 0; i < got[o].data.size(); ++i) {
      double a = got[o].data[i], b = want[o].data[i];
      bool ok = same_value(a, b) || (std::isfinite(a) && std::fabs(a - b) <= atol + rtol * std::fabs(b));
      if (!ok && bad++ < 3)
        ADD_FAILURE() << what << " output " << o << " element " << i << ": got " << a << ", want " << b;
    }
    EXPECT_EQ(bad, 0) << what << " output " << o;
  }
}

// The For statements of a program, outermost first, with their depth in loops.
struct LoopInfo {
  Stmt loop;
  int depth = 0;
  bool innermost = false;
};
void collect_loops(const Stmt& s, int depth, std::vector<LoopInfo>* out) {
  if (s.kind() == StmtKind::For) {
    bool inner = true;
    tile::visit(s->body.at(0), [&](const Stmt& x) { inner &= x.kind() != StmtKind::For; });
    out->push_back({s, depth, inner});
    collect_loops(s->body.at(0), depth + 1, out);
    return;
  }
  if (s.kind() == StmtKind::Seq)
    for (const Stmt& c : s->body) collect_loops(c, depth, out);
}
std::vector<LoopInfo> loops_of(const Kernel& k) {
  std::vector<LoopInfo> out;
  collect_loops(k.body, 0, &out);
  return out;
}

// Names of the Memory buffers a program allocates.
std::set<std::string> memory_allocs(const Kernel& k) {
  std::set<std::string> names;
  tile::visit(k.body, [&](const Stmt& s) {
    if (s.kind() == StmtKind::Alloc && k.buffers[s->buffer].scope == Scope::Memory) names.insert(k.buffers[s->buffer].name);
  });
  return names;
}

// ============================================================================
// Index
// ============================================================================

TEST(tile_index, FoldsIdentitiesAndLiterals) {
  Index x = Index::var("x"), y = Index::var("y");
  EXPECT_TRUE((x + Index(0)).same_as(x));
  EXPECT_TRUE((Index(0) + x).same_as(x));
  EXPECT_TRUE((x * Index(1)).same_as(x));
  EXPECT_TRUE((Index(1) * x).same_as(x));
  EXPECT_TRUE((x / Index(1)).same_as(x));
  Index zero_mul = x * Index(0), zero_mod = x % Index(1);
  ASSERT_TRUE(zero_mul.is_const());
  EXPECT_EQ(zero_mul.value(), 0);
  ASSERT_TRUE(zero_mod.is_const());
  EXPECT_EQ(zero_mod.value(), 0);
  Index lit = Index(3) * Index(4) + Index(5);
  ASSERT_TRUE(lit.is_const());
  EXPECT_EQ(lit.value(), 17);
  // Literals of nested sums gather into one.
  Index gathered = (x + Index(3)) + Index(4);
  EXPECT_EQ(gathered.kind(), tile::IndexKind::Add);
  EXPECT_TRUE(gathered.a().same_as(x));
  ASSERT_TRUE(gathered.b().is_const());
  EXPECT_EQ(gathered.b().value(), 7);
  EXPECT_EQ(gathered.str(), "x + 7");
  EXPECT_EQ((x - Index(2)).str(), "x - 2");
  EXPECT_TRUE(min(x, x).same_as(x));
  EXPECT_FALSE((x + Index(1)).same_as(x + Index(2)));
}

TEST(tile_index, FloorDivisionAndRemainderOfLiterals) {
  auto lit = [](const Index& e) {
    EXPECT_TRUE(e.is_const()) << e.str();
    return e.is_const() ? e.value() : std::numeric_limits<int64_t>::min();
  };
  EXPECT_EQ(lit(Index(7) / Index(2)), 3);
  EXPECT_EQ(lit(Index(7) % Index(2)), 1);
  EXPECT_EQ(lit(Index(-7) / Index(2)), -4);  // floor, not C's truncation (-3)
  EXPECT_EQ(lit(Index(-7) % Index(2)), 1);   // C gives -1
  EXPECT_EQ(lit(Index(7) / Index(-2)), -4);
  EXPECT_EQ(lit(Index(7) % Index(-2)), -1);
  EXPECT_EQ(lit(Index(-8) / Index(2)), -4);
  EXPECT_EQ(lit(Index(-8) % Index(2)), 0);
  EXPECT_EQ(lit(min(Index(3), Index(-5))), -5);
  // eval agrees with the folding on the same values.
  Index x = Index::var("x");
  EXPECT_EQ(((x - Index(7)) / Index(2)).eval({{"x", 0}}), -4);
  EXPECT_EQ(((x - Index(7)) % Index(2)).eval({{"x", 0}}), 1);
  EXPECT_EQ(min(x * Index(3), Index(10)).eval({{"x", 5}}), 10);
  EXPECT_EQ(min(x * Index(3), Index(10)).eval({{"x", 2}}), 6);
}

TEST(tile_index, BoundsOverLoopRanges) {
  Index x = Index::var("x"), y = Index::var("y");
  std::map<std::string, Interval> r = {{"x", {0, 9}}, {"y", {0, 3}}};
  auto expect_bounds = [&](const Index& e, int64_t lo, int64_t hi) {
    std::optional<Interval> b = tile::bounds(e, r);
    ASSERT_TRUE(b.has_value()) << e.str();
    EXPECT_EQ(b->lo, lo) << e.str();
    EXPECT_EQ(b->hi, hi) << e.str();
  };
  expect_bounds(x * Index(4) + y, 0, 39);
  expect_bounds(x - y, -3, 9);
  expect_bounds(x * Index(-2) + Index(5), -13, 5);
  expect_bounds(x / Index(4), 0, 2);
  expect_bounds((x * Index(4) + y) / Index(8), 0, 4);
  expect_bounds(x % Index(4), 0, 3);
  expect_bounds(x % Index(16), 0, 9);  // never wraps: the range itself
  expect_bounds(min(x, Index(5)), 0, 5);
  expect_bounds(min(x + Index(2), y * Index(5)), 0, 11);
  expect_bounds(Index(6), 6, 6);
  // A division of a possibly negative value spans both floor division
  // (the interpreter's) and C's truncation (the printers'): x - y in [-3, 9].
  expect_bounds((x - y) / Index(2), -2, 4);
  // Unknown: a free variable, or a remainder of a possibly negative value.
  EXPECT_FALSE(tile::bounds(Index::var("z") + x, r).has_value());
  EXPECT_FALSE(tile::bounds((y - x) % Index(3), r).has_value());
}

TEST(tile_index, AffineForms) {
  Index x = Index::var("x"), y = Index::var("y");
  std::optional<tile::Affine> a = tile::as_affine((x + Index(2)) * Index(3) + y * Index(5) - Index(1));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->constant, 5);
  EXPECT_EQ(a->coef.at("x"), 3);
  EXPECT_EQ(a->coef.at("y"), 5);
  EXPECT_EQ(a->coef.size(), 2u);
  std::optional<tile::Affine> b = tile::as_affine(Index(3) * (x + y) + x - y);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->constant, 0);
  EXPECT_EQ(b->coef.at("x"), 4);
  EXPECT_EQ(b->coef.at("y"), 2);
  std::optional<tile::Affine> c = tile::as_affine(Index(12));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->constant, 12);
  EXPECT_TRUE(c->coef.empty());
  EXPECT_FALSE(tile::as_affine(x * y).has_value());
  EXPECT_FALSE(tile::as_affine(x / Index(2)).has_value());
  EXPECT_FALSE(tile::as_affine(x % Index(2) + y).has_value());
  EXPECT_FALSE(tile::as_affine(min(x, y)).has_value());
}

// ============================================================================
// lower_graph + tile::interpret against verify::interpret
// ============================================================================

void expect_lowering_matches(const Graph& g, uint32_t seed, const std::string& what) {
  Kernel k = tile::lower_graph(g, "k");
  EXPECT_EQ(problems_text(tile::verify(k)), "") << what << "\n" << tile::print(k);
  std::vector<Tensor> in = random_inputs(g, seed);
  expect_exact(tile::interpret(k, in), verify::interpret(g, in), what);
}

TEST(tile_lower, ElementwiseChain) {
  Graph g = make_graph({{"x", {DType::F32, {3, 5}}}, {"y", {DType::F32, {3, 5}}}});
  NodeId x = param(g, 0), y = param(g, 1);
  NodeId e = binary(g, Op::Mul, unary(g, Op::Exp, x), y);
  NodeId s = binary(g, Op::Sub, e, unary(g, Op::Sqrt, unary(g, Op::Abs, x)));
  NodeId c = binary(g, Op::Add, s, splat(g, 1.5, DType::F32, {3, 5}));
  g.outputs = {binary(g, Op::Maximum, c, unary(g, Op::Neg, y))};
  expect_lowering_matches(g, 1, "elementwise chain");
}

TEST(tile_lower, ReductionsOverLastMiddleAndAllAxes) {
  Graph g = make_graph({{"x", {DType::F32, {3, 5, 4}}}});
  NodeId x = param(g, 0);
  g.outputs = {reduce(g, Op::ReduceSum, x, {2}), reduce(g, Op::ReduceMax, x, {2}), reduce(g, Op::ReduceMin, x, {1}),
               reduce(g, Op::ReduceSum, x, {1}), reduce(g, Op::ReduceSum, x, {0, 1, 2}),
               reduce(g, Op::ReduceMax, x, {0, 2})};
  expect_lowering_matches(g, 2, "reductions");
}

TEST(tile_lower, EinsumMatmulBatchedAndDot) {
  Graph g = make_graph({{"a", {DType::F32, {4, 6}}},
                        {"b", {DType::F32, {6, 3}}},
                        {"p", {DType::F32, {2, 4, 6}}},
                        {"q", {DType::F32, {2, 6, 3}}},
                        {"v", {DType::F32, {6}}}});
  g.outputs = {einsum(g, "ij,jk->ik", param(g, 0), param(g, 1)), einsum(g, "bij,bjk->bik", param(g, 2), param(g, 3)),
               einsum(g, "i,i->", param(g, 4), param(g, 4)), einsum(g, "ij,j->i", param(g, 0), param(g, 4))};
  expect_lowering_matches(g, 3, "einsums");
}

// An einsum whose last output axis is the last axis of every operand that
// carries it (A @ B, v @ B) is lowered in i-k-j order: the output zeroed,
// then updated along rows. Otherwise (A @ v, A @ B.T) the innermost output
// axis would walk down columns: it is lowered as a reduction, a register
// accumulator per output element summed along the operands' rows.
TEST(tile_lower, EinsumOrderFollowsTheContiguousAxis) {
  Graph g = make_graph({{"a", {DType::F32, {4, 6}}}, {"b", {DType::F32, {6, 3}}}, {"c", {DType::F32, {5, 6}}},
                        {"v", {DType::F32, {6}}}});
  auto lowered = [&](const std::string& spec, NodeId x, NodeId y) {
    Graph h = g;
    h.outputs = {einsum(h, spec, x, y)};
    expect_lowering_matches(h, 4, spec);
    return tile::print(tile::lower_graph(h, "k"));
  };
  const std::string ikj = "+= einsum(", reduction = "alloc acc";
  for (auto [spec, x, y] : {std::tuple{"ij,jk->ik", 0, 1}, std::tuple{"j,jk->k", 3, 1}}) {
    std::string text = lowered(spec, param(g, x), param(g, y));
    EXPECT_EQ(text.find(reduction), std::string::npos) << spec << "\n" << text;
    EXPECT_NE(text.find(ikj), std::string::npos) << spec << "\n" << text;
  }
  for (auto [spec, x, y] : {std::tuple{"ij,j->i", 0, 3}, std::tuple{"ij,kj->ik", 0, 2}}) {
    std::string text = lowered(spec, param(g, x), param(g, y));
    EXPECT_NE(text.find(reduction), std::string::npos) << spec << "\n" << text;
  }
}

TEST(tile_lower, LayoutOpsAndIota) {
  Graph g = make_graph({{"a", {DType::F32, {2, 3}}}, {"v", {DType::F32, {3}}}});
  NodeId a = param(g, 0), v = param(g, 1);
  NodeId tr = transpose(g, a, {1, 0});
  NodeId rs = reshape(g, tr, {6});
  NodeId sl = slice(g, a, {1, 2}, {-1, -2}, {2, 2});
  NodeId cc = concat(g, {a, binary(g, Op::Mul, a, a), a}, 0);
  NodeId cc1 = concat(g, {a, reshape(g, v, {1, 3}), a}, 0);
  NodeId bc = broadcast(g, reshape(g, v, {1, 3}), {4, 3});
  NodeId io = iota(g, {2, 3}, 1, DType::I64);
  NodeId iof = binary(g, Op::Add, cast(g, iota(g, {2, 3}, 0, DType::I32), DType::F32), a);
  g.outputs = {tr, rs, sl, cc, cc1, bc, io, iof};
  expect_lowering_matches(g, 4, "layout and iota");
}

TEST(tile_lower, OutputsThatAreParamsOrDuplicates) {
  Graph g = make_graph({{"x", {DType::F32, {4}}}, {"unused", {DType::F32, {2}}}});
  NodeId x = param(g, 0);
  NodeId e = unary(g, Op::Tanh, x);
  NodeId c = splat(g, 2.0, DType::F32, {4});
  g.outputs = {x, e, e, x, c};
  Kernel k = tile::lower_graph(g, "k");
  // Inputs are the params in order (used or not), Outputs the results in order.
  int inputs = 0, outputs = 0;
  for (const tile::Buffer& b : k.buffers) {
    if (b.scope == Scope::Input) {
      EXPECT_EQ(b.param, inputs++);
    }
    if (b.scope == Scope::Output) {
      EXPECT_EQ(b.output, outputs++);
    }
  }
  EXPECT_EQ(inputs, 2);
  EXPECT_EQ(outputs, 5);
  expect_lowering_matches(g, 5, "outputs that are params or duplicates");
}

TEST(tile_lower, HalfPrecisionValues) {
  Graph g = make_graph({{"x", {DType::F16, {3, 8}}}, {"w", {DType::F16, {8, 2}}}});
  NodeId x = param(g, 0);
  NodeId e = binary(g, Op::Mul, unary(g, Op::Exp, x), x);
  NodeId s = reduce(g, Op::ReduceSum, e, {1});
  NodeId m = einsum(g, "ij,jk->ik", x, param(g, 1));
  NodeId f = cast(g, binary(g, Op::Div, x, splat(g, 3.0, DType::F16, {3, 8})), DType::F32);
  g.outputs = {e, s, m, f};
  expect_lowering_matches(g, 6, "f16");
}

// ============================================================================
// The verifier on hand-built kernels
// ============================================================================

// X: input f32[4, 4], out: output f32[4]; a well-formed body to start from.
struct SmallKernel {
  Kernel k;
  int x = -1, out = -1;
  SmallKernel() {
    k.name = "small";
    x = k.add_buffer({"X", DType::F32, {4, 4}, Scope::Input, 0, -1});
    out = k.add_buffer({"out", DType::F32, {4}, Scope::Output, -1, 0});
  }
  int add(const std::string& name, Scope s, Shape shape = {}) { return k.add_buffer({name, DType::F32, shape, s, -1, -1}); }
  Value x_at(const Index& i, const Index& j) const { return Value::load(x, {i, j}, DType::F32); }
};

Index v(const std::string& n) { return Index::var(n); }
Stmt for_(const std::string& var, int64_t n, Stmt body, LoopKind kind = LoopKind::Serial) {
  return Stmt::loop(var, Index(n), kind, std::move(body));
}
Value f32(double c) { return Value::constant(c, DType::F32); }
ir::Node mul_node() {
  ir::Node n{};
  n.op = Op::Mul;
  n.type = ir::Type{DType::F32, {}};
  return n;
}

// One problem at least, and every problem names `buffer`.
void expect_rejected(const Kernel& k, const std::string& buffer, const std::string& phrase) {
  std::vector<std::string> p = tile::verify(k);
  ASSERT_FALSE(p.empty()) << tile::print(k);
  bool found = false;
  for (const std::string& line : p) found |= line.find(buffer) != std::string::npos && line.find(phrase) != std::string::npos;
  EXPECT_TRUE(found) << "no problem mentions " << buffer << " and \"" << phrase << "\":\n" << problems_text(p);
}

TEST(tile_verify, WellFormedHandKernelIsClean) {
  SmallKernel s;
  int acc = s.add("acc", Scope::Register);
  s.k.body = Stmt::seq({for_("i", 4, Stmt::seq({Stmt::alloc(acc), Stmt::store(acc, {}, f32(0)),
                                                 for_("r", 4, Stmt::accumulate(acc, {}, Combine::Sum, s.x_at(v("i"), v("r"))),
                                                      LoopKind::Vectorized),
                                                 Stmt::store(s.out, {v("i")}, Value::load(acc, {}, DType::F32))}),
                             LoopKind::Parallel)});
  EXPECT_EQ(problems_text(tile::verify(s.k)), "");
}

TEST(tile_verify, ReadBeforeWrite) {
  SmallKernel s;
  int t = s.add("tmp", Scope::Memory, {4});
  s.k.body = Stmt::seq({Stmt::alloc(t), for_("i", 4, Stmt::store(s.out, {v("i")}, Value::load(t, {v("i")}, DType::F32))),
                        Stmt::free(t)});
  expect_rejected(s.k, "tmp", "before anything writes it");
}

TEST(tile_verify, IndexOutOfBounds) {
  SmallKernel s;
  s.k.body = for_("i", 4, Stmt::store(s.out, {v("i") + Index(1)}, s.x_at(v("i"), Index(0))));
  expect_rejected(s.k, "out", "outside [0, 4)");
  SmallKernel r;
  r.k.body = for_("i", 4, Stmt::store(r.out, {v("i")}, r.x_at(v("i"), Index(4) - v("i"))));
  expect_rejected(r.k, "X", "outside [0, 4)");
}

TEST(tile_verify, UseAfterFree) {
  SmallKernel s;
  int t = s.add("tmp", Scope::Memory, {4});
  s.k.body = Stmt::seq({Stmt::alloc(t), for_("i", 4, Stmt::store(t, {v("i")}, s.x_at(v("i"), Index(0)))), Stmt::free(t),
                        for_("i", 4, Stmt::store(s.out, {v("i")}, Value::load(t, {v("i")}, DType::F32)))});
  expect_rejected(s.k, "tmp", "outside its allocation");
}

TEST(tile_verify, WritingAnInput) {
  SmallKernel s;
  s.k.body = Stmt::seq({for_("i", 4, Stmt::store(s.x, {v("i"), Index(0)}, f32(1))),
                        for_("i", 4, Stmt::store(s.out, {v("i")}, s.x_at(v("i"), Index(0))))});
  expect_rejected(s.k, "X", "writes the input");
}

TEST(tile_verify, ParallelIterationsWritingTheSameElement) {
  SmallKernel s;
  // Every i writes out[j] for all j.
  s.k.body = Stmt::seq({for_("j", 4, Stmt::store(s.out, {v("j")}, f32(0))),
                        for_("i", 4, for_("j", 4, Stmt::store(s.out, {v("j")}, s.x_at(v("i"), v("j")))),
                             LoopKind::Parallel)});
  expect_rejected(s.k, "out", "parallel loop i");
  // Overlapping slices: row i writes wide[i .. i + 1], row i + 1 starts at wide[i + 1].
  SmallKernel o;
  int wide = o.add("wide", Scope::Memory, {8});
  o.k.body = Stmt::seq({Stmt::alloc(wide),
                        for_("i", 4, for_("j", 2, Stmt::store(wide, {v("i") + v("j")}, o.x_at(v("i"), v("j")))),
                             LoopKind::Parallel),
                        Stmt::free(wide), for_("i", 4, Stmt::store(o.out, {v("i")}, f32(0)))});
  expect_rejected(o.k, "wide", "overlapping");
  // The disjoint version (row i writes wide[2i + j]) is accepted.
  SmallKernel d;
  int w2 = d.add("wide", Scope::Memory, {8});
  d.k.body = Stmt::seq({Stmt::alloc(w2),
                        for_("i", 4, for_("j", 2, Stmt::store(w2, {v("i") * Index(2) + v("j")}, d.x_at(v("i"), v("j")))),
                             LoopKind::Parallel),
                        for_("i", 4, Stmt::store(d.out, {v("i")}, Value::load(w2, {v("i") * Index(2)}, DType::F32))),
                        Stmt::free(w2)});
  EXPECT_EQ(problems_text(tile::verify(d.k)), "");
}

Kernel reduce_kernel(SmallKernel& s, Combine c, double identity, LoopKind inner) {
  int acc = s.add("acc", Scope::Register);
  s.k.body = for_("i", 4, Stmt::seq({Stmt::alloc(acc), Stmt::store(acc, {}, f32(identity)),
                                     for_("r", 4, Stmt::accumulate(acc, {}, c, s.x_at(v("i"), v("r"))), inner),
                                     Stmt::store(s.out, {v("i")}, Value::load(acc, {}, DType::F32))}));
  return s.k;
}

// Across vector lanes only a reduction (Sum, Max, Min) into a scalar
// Register may be carried; any other value carried from one iteration to the
// next (here a running product stored back) is rejected.
TEST(tile_verify, VectorizedLoopCarryingAValue) {
  for (Combine c : {Combine::Sum, Combine::Max, Combine::Min}) {
    SmallKernel s;
    double identity = c == Combine::Sum ? 0 : c == Combine::Max ? -INFINITY : INFINITY;
    EXPECT_EQ(problems_text(tile::verify(reduce_kernel(s, c, identity, LoopKind::Vectorized))), "");
  }
  SmallKernel s;
  int acc = s.add("acc", Scope::Register);
  Value carried = Value::apply(mul_node(), {Value::load(acc, {}, DType::F32), s.x_at(v("i"), v("r"))});
  s.k.body = for_("i", 4, Stmt::seq({Stmt::alloc(acc), Stmt::store(acc, {}, f32(1)),
                                     for_("r", 4, Stmt::store(acc, {}, carried), LoopKind::Vectorized),
                                     Stmt::store(s.out, {v("i")}, Value::load(acc, {}, DType::F32))}));
  expect_rejected(s.k, "acc", "vectorized loop r");
  SmallKernel serial;
  EXPECT_EQ(problems_text(tile::verify(reduce_kernel(serial, Combine::Max, -INFINITY, LoopKind::Serial))), "");
}

TEST(tile_verify, RegisterUsedOutsideItsSeq) {
  SmallKernel s;
  int acc = s.add("acc", Scope::Register);
  s.k.body = Stmt::seq({for_("i", 4, Stmt::seq({Stmt::seq({Stmt::alloc(acc), Stmt::store(acc, {}, s.x_at(v("i"), Index(0)))}),
                                                 Stmt::store(s.out, {v("i")}, Value::load(acc, {}, DType::F32))}))});
  expect_rejected(s.k, "acc", "outside its allocation");
}

// ============================================================================
// Passes
// ============================================================================

// The most terms any Sum accumulator element receives per allocation of it:
// per Accumulate, the product of the extents of the loops between the
// target's Alloc (or the top) and the Accumulate that do not index the target.
int64_t most_terms_per_accumulator(const Kernel& k) {
  std::map<int, int64_t> terms;
  std::map<int, size_t> alloc_depth;
  std::vector<std::pair<std::string, int64_t>> loops;
  std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
    switch (s.kind()) {
      case StmtKind::Seq:
        for (const Stmt& c : s->body) walk(c);
        return;
      case StmtKind::For:
        EXPECT_TRUE(s->extent.is_const());
        loops.push_back({s->var, s->extent.is_const() ? s->extent.value() : 0});
        walk(s->body.at(0));
        loops.pop_back();
        return;
      case StmtKind::Alloc:
        alloc_depth[s->buffer] = loops.size();
        terms[s->buffer] = 0;
        return;
      case StmtKind::Accumulate: {
        if (s->combine != Combine::Sum) return;
        size_t from = alloc_depth.count(s->buffer) ? alloc_depth[s->buffer] : 0;
        int64_t n = 1;
        for (size_t l = from; l < loops.size(); ++l) {
          bool indexes = false;
          for (const Index& i : s->idx) indexes |= i.uses(loops[l].first);
          if (!indexes) n *= loops[l].second;
        }
        terms[s->buffer] += n;
        return;
      }
      default: return;
    }
  };
  walk(k.body);
  int64_t most = 0;
  for (const auto& [b, n] : terms) most = std::max(most, n);
  return most;
}

// The longest loop with a Sum Accumulate inside.
int64_t longest_loop_around_a_sum(const Kernel& k) {
  int64_t most = 0;
  for (const LoopInfo& l : loops_of(k)) {
    bool sums = false;
    tile::visit(l.loop, [&](const Stmt& s) { sums |= s.kind() == StmtKind::Accumulate && s->combine == Combine::Sum; });
    if (sums) most = std::max(most, l.loop->extent.value());
  }
  return most;
}

TEST(tile_cascade_sums, LongSumsBecomeTreesOfShortOnes) {
  Graph g = make_graph({{"v", {DType::F32, {100000}}}, {"m", {DType::F32, {250, 400}}}, {"r", {DType::F32, {3, 7001}}}});
  g.outputs = {reduce(g, Op::ReduceSum, param(g, 0), {0}), reduce(g, Op::ReduceSum, param(g, 1), {0, 1}),
               reduce(g, Op::ReduceSum, param(g, 2), {1}), einsum(g, "i,i->", param(g, 0), param(g, 0))};
  Kernel before = tile::lower_graph(g, "k");
  Kernel after = tile::cascade_sums(before);
  EXPECT_EQ(problems_text(tile::verify(after)), "") << tile::print(after);
  // The lowered form sums 100000 terms into one accumulator; the pass's
  // result never more than a block.
  EXPECT_EQ(most_terms_per_accumulator(before), 100000);
  EXPECT_GT(longest_loop_around_a_sum(before), tile::kCascadeBlock);
  EXPECT_LE(most_terms_per_accumulator(after), tile::kCascadeBlock);
  EXPECT_LE(longest_loop_around_a_sum(after), tile::kCascadeBlock);

  std::vector<Tensor> in = random_inputs(g, 7, 0.5, 2);
  std::vector<Tensor> want = verify::interpret(g, in);
  expect_exact(tile::interpret(before, in), want, "lowered");
  expect_close(tile::interpret(after, in), want, 1e-13, 0, "cascaded");
}

TEST(tile_cascade_sums, ShortSumsAndMapsAreLeftAlone) {
  Graph g = make_graph({{"x", {DType::F32, {8, 64}}}});
  NodeId x = param(g, 0);
  g.outputs = {reduce(g, Op::ReduceSum, x, {1}), reduce(g, Op::ReduceMax, unary(g, Op::Exp, x), {0})};
  Kernel k = tile::lower_graph(g, "k");
  EXPECT_EQ(tile::print(tile::cascade_sums(k)), tile::print(k));
}

const runtime::CompileOptions& compile_options(bool openmp) {
  auto make = [](bool omp) {
    runtime::CompileOptions o;
    o.flags = {"-O2", "-ffp-contract=off", "-fPIC", "-shared"};
    if (omp) o.flags.insert(o.flags.begin() + 1, "-fopenmp");
    o.cache_dir = (std::filesystem::path(testing::TempDir()) / "axon-tile-test-cache").string();
    return o;
  };
  static const runtime::CompileOptions plain = make(false), omp = make(true);
  return openmp ? omp : plain;
}

// OpenMP kernels load libgomp; keep it loaded after the kernels are closed.
const bool kGompPinned = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NODELETE) != nullptr;

std::vector<Tensor> run_compiled(const codegen::KernelSource& src, const Graph& g, const std::vector<Tensor>& in,
                                 bool openmp) {
  runtime::LoadedKernel kernel(runtime::compile_shared(src, compile_options(openmp)), src.entry);
  runtime::KernelBuffers bufs = runtime::make_buffers(g, in);
  kernel.call(bufs.pointers());
  std::vector<Tensor> out;
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    const Type& t = g[g.outputs[o]].type;
    out.push_back(Tensor{t, verify::from_buffer(bufs.storage[g.params.size() + o].data(), t.numel(), t.dtype)});
  }
  return out;
}

TEST(tile_cascade_sums, Float32NaiveKernelSumsFarBetterThanSequential) {
  const int64_t n = int64_t{1} << 22;
  Graph g = make_graph({{"x", {DType::F32, {n}}}});
  g.outputs = {reduce(g, Op::ReduceSum, param(g, 0), {0})};
  Tensor x{g.params[0].type, std::vector<double>(static_cast<size_t>(n))};
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> noise(0, 1e-3);
  for (double& e : x.data) e = static_cast<float>(1.0 + noise(rng));
  const double exact = verify::interpret(g, {x})[0].data[0];

  float sequential = 0;
  for (double e : x.data) sequential += static_cast<float>(e);
  const double sequential_error = std::fabs(sequential - exact);

  const double naive = run_compiled(codegen::emit_naive_cpp(g), g, {x}, false)[0].data[0];
  const double cascaded_error = std::fabs(naive - exact);
  // Sequential float32 summation of 4M terms near 1 loses hundreds; the
  // cascaded sum stays within a few units of its last place.
  EXPECT_GT(sequential_error, 100 * cascaded_error) << "sequential " << sequential << " naive " << naive << " exact "
                                                      << exact;
  EXPECT_LT(cascaded_error, 1e-6 * exact);
}

// softmax over the last axis of x [rows, cols], as the frontend spells it.
Graph softmax_graph(int64_t rows, int64_t cols) {
  Graph g = make_graph({{"x", {DType::F32, {rows, cols}}}});
  NodeId x = param(g, 0);
  NodeId m = reduce(g, Op::ReduceMax, x, {1});
  NodeId mb = broadcast(g, reshape(g, m, {rows, 1}), {rows, cols});
  NodeId e = unary(g, Op::Exp, binary(g, Op::Sub, x, mb));
  NodeId s = reduce(g, Op::ReduceSum, e, {1});
  NodeId sb = broadcast(g, reshape(g, s, {rows, 1}), {rows, cols});
  g.outputs = {binary(g, Op::Div, e, sb)};
  return g;
}

std::string temp_name(const Graph& g, Op op) {
  for (NodeId i = 0; i < g.size(); ++i)
    if (g[i].op == op) return "t" + std::to_string(i);
  return "?";
}

TEST(tile_inline_maps, SoftmaxKeepsOnlyReductionsAndTheTwiceReadExp) {
  Graph g = softmax_graph(8, 16);
  Kernel before = tile::lower_graph(g, "k");
  Kernel after = tile::inline_maps(before);
  EXPECT_EQ(problems_text(tile::verify(after)), "") << tile::print(after);
  const std::string sub = temp_name(g, Op::Sub), ex = temp_name(g, Op::Exp), rs = temp_name(g, Op::Reshape),
                    bc = temp_name(g, Op::Broadcast), mx = temp_name(g, Op::ReduceMax), sm = temp_name(g, Op::ReduceSum);
  std::set<std::string> b = memory_allocs(before), a = memory_allocs(after);
  for (const std::string& t : {sub, ex, rs, bc, mx, sm}) EXPECT_TRUE(b.count(t)) << t << " before";
  // max, exp(x - max) and sum; exp is transcendental and read by two
  // statements (the sum and the divide), so it stays stored.
  EXPECT_EQ(a, (std::set<std::string>{mx, ex, sm})) << tile::print(after);
  EXPECT_EQ(a.size() + 5, b.size());
  // Nothing reads an inlined buffer any more.
  std::set<int> loaded;
  tile::visit(after.body, [&](const Stmt& s) {
    if (s->value.defined()) s->value.visit_loads([&](const Value& l) { loaded.insert(l.buffer()); });
  });
  for (int bi : loaded) EXPECT_TRUE(after.buffers[bi].scope != Scope::Memory || a.count(after.buffers[bi].name))
      << after.buffers[bi].name;

  std::vector<Tensor> in = random_inputs(g, 8, -4, 4);
  expect_exact(tile::interpret(after, in), tile::interpret(before, in), "inlined softmax");
  expect_exact(tile::interpret(after, in), verify::interpret(g, in), "inlined softmax vs graph");
}

TEST(tile_inline_maps, ExpensiveValueReadOnceIsInlined) {
  Graph g = make_graph({{"x", {DType::F32, {6, 10}}}});
  NodeId e = unary(g, Op::Exp, param(g, 0));
  g.outputs = {reduce(g, Op::ReduceSum, e, {1})};
  Kernel before = tile::lower_graph(g, "k");
  Kernel after = tile::inline_maps(before);
  EXPECT_EQ(memory_allocs(before), std::set<std::string>{temp_name(g, Op::Exp)});
  EXPECT_TRUE(memory_allocs(after).empty()) << tile::print(after);
  EXPECT_EQ(problems_text(tile::verify(after)), "");
  std::vector<Tensor> in = random_inputs(g, 9);
  expect_exact(tile::interpret(after, in), tile::interpret(before, in), "exp inlined into its sum");
}

std::vector<LoopInfo> top_loops(const Kernel& k) {
  std::vector<LoopInfo> top;
  for (const LoopInfo& l : loops_of(k))
    if (l.depth == 0) top.push_back(l);
  return top;
}

TEST(tile_parallelize, RowSumIsParallelAndFullReductionStaysSerial) {
  Graph g = make_graph({{"x", {DType::F32, {256, 256}}}});
  NodeId x = param(g, 0);
  g.outputs = {reduce(g, Op::ReduceSum, x, {1})};
  Kernel rows = tile::parallelize(tile::lower_graph(g, "rows"), 4);
  std::vector<LoopInfo> top = top_loops(rows);
  ASSERT_EQ(top.size(), 1u) << tile::print(rows);
  EXPECT_EQ(top[0].loop->loop, LoopKind::Parallel);
  EXPECT_EQ(top[0].loop->threads, 4);
  for (const LoopInfo& l : loops_of(rows))
    if (l.depth > 0) {
      EXPECT_EQ(l.loop->loop, LoopKind::Serial);
    }
  EXPECT_EQ(problems_text(tile::verify(rows)), "");

  Graph h = make_graph({{"x", {DType::F32, {256, 256}}}});
  h.outputs = {reduce(h, Op::ReduceSum, param(h, 0), {0, 1})};
  Kernel full = tile::lower_graph(h, "full");
  std::vector<LoopInfo> ftop = top_loops(full);
  ASSERT_FALSE(ftop.empty());
  EXPECT_GE(tile::points(ftop[0].loop), tile::kParallelMinPoints);  // big enough: only dependence keeps it serial
  Kernel fullp = tile::parallelize(full, 4);
  for (const LoopInfo& l : loops_of(fullp)) EXPECT_EQ(l.loop->loop, LoopKind::Serial) << l.loop->var;

  std::vector<Tensor> in = random_inputs(g, 10);
  expect_exact(tile::interpret(rows, in), verify::interpret(g, in), "parallel row sums");
  expect_exact(tile::interpret(fullp, in), verify::interpret(h, in), "full sum");
}

TEST(tile_parallelize, ReversedParallelLoopShowsADependence) {
  // A prefix sum marked Parallel by hand: the interpreter's reverse order
  // changes its result, which is what makes the parallelize test above able
  // to fail on a dependent loop.
  SmallKernel s;
  int acc = s.add("acc", Scope::Register);
  auto body = [&](LoopKind kind) {
    return Stmt::seq({Stmt::alloc(acc), Stmt::store(acc, {}, f32(0)),
                      for_("i", 4, Stmt::seq({Stmt::accumulate(acc, {}, Combine::Sum, s.x_at(v("i"), Index(0))),
                                              Stmt::store(s.out, {v("i")}, Value::load(acc, {}, DType::F32))}),
                           kind)});
  };
  Tensor x{Type{DType::F32, Shape{4, 4}}, std::vector<double>(16, 0)};
  for (int i = 0; i < 4; ++i) x.data[i * 4] = i + 1;
  s.k.body = body(LoopKind::Serial);
  EXPECT_EQ(tile::interpret(s.k, {x})[0].data, (std::vector<double>{1, 3, 6, 10}));
  s.k.body = body(LoopKind::Parallel);
  EXPECT_FALSE(tile::verify(s.k).empty());
  EXPECT_EQ(tile::interpret(s.k, {x})[0].data, (std::vector<double>{10, 9, 7, 4}));
}

TEST(tile_vectorize, InnermostMapAndReductionLoops) {
  Graph g = make_graph({{"x", {DType::F32, {8, 32}}}});
  NodeId x = param(g, 0);
  NodeId y = binary(g, Op::Add, binary(g, Op::Mul, x, x), x);
  g.outputs = {y, reduce(g, Op::ReduceMax, x, {1}), reduce(g, Op::ReduceSum, x, {1})};
  Kernel before = tile::lower_graph(g, "k");
  Kernel after = tile::vectorize(before);
  EXPECT_EQ(problems_text(tile::verify(after)), "");
  int vectorized = 0;
  for (const LoopInfo& l : loops_of(after)) {
    bool max = false, sum = false, store = false;
    tile::visit(l.loop, [&](const Stmt& s) {
      max |= s.kind() == StmtKind::Accumulate && s->combine == Combine::Max;
      sum |= s.kind() == StmtKind::Accumulate && s->combine == Combine::Sum;
      store |= s.kind() == StmtKind::Store && after.buffers[s->buffer].scope != Scope::Register;
    });
    if (!l.innermost) {
      EXPECT_EQ(l.loop->loop, LoopKind::Serial) << l.loop->var;
      continue;
    }
    if (max || sum || store) EXPECT_EQ(l.loop->loop, LoopKind::Vectorized) << tile::print(after);
    vectorized += l.loop->loop == LoopKind::Vectorized;
  }
  EXPECT_EQ(vectorized, 4);  // the inner loops of the two maps, of the max and of the sum
  std::vector<Tensor> in = random_inputs(g, 12);
  expect_exact(tile::interpret(after, in), tile::interpret(before, in), "vectorized");
}

// Divisions in a kernel's values, by where they sit: (innermost loop
// vectorized, divisor invariant in it) -> count. `div(1, d)` is counted apart.
struct Divisions {
  int vector_invariant = 0, vector_varying = 0, elsewhere = 0, reciprocals = 0;
};
Divisions divisions(const Kernel& k) {
  Divisions d;
  std::function<void(const Value&, const tile::StmtNode*)> value = [&](const Value& v, const tile::StmtNode* loop) {
    if (v.kind() != tile::ValueKind::Apply) return;
    for (const Value& a : v.args()) value(a, loop);
    if (v.op().op != Op::Div) return;
    const Value& num = v.args()[0];
    if (num.kind() == tile::ValueKind::Apply && num.op().op == Op::Constant && num.op().attrs.value == 1.0) ++d.reciprocals;
    else if (!loop || loop->loop != LoopKind::Vectorized) ++d.elsewhere;
    else if (v.args()[1].uses(loop->var)) ++d.vector_varying;
    else ++d.vector_invariant;
  };
  std::function<void(const Stmt&, const tile::StmtNode*)> walk = [&](const Stmt& s, const tile::StmtNode* loop) {
    if (s.kind() == StmtKind::Seq) for (const Stmt& c : s->body) walk(c, loop);
    if (s.kind() == StmtKind::For) walk(s->body.at(0), &s.node());
    if (s.kind() == StmtKind::Store || s.kind() == StmtKind::Accumulate) value(s->value, loop);
  };
  walk(k.body, nullptr);
  return d;
}

TEST(tile_reciprocal_divisors, DivisionByARowScalarInAVectorLoopBecomesAProduct) {
  // softmax's division by its row sum, and a division by a varying value.
  Graph g = softmax_graph(8, 100);
  NodeId x = param(g, 0);
  g.outputs.push_back(binary(g, Op::Div, x, binary(g, Op::Add, x, splat(g, 3.0, DType::F32, {8, 100}))));
  tile::LoopsOptions o;
  Kernel before = tile::vectorize(tile::lower_with(g, {tile::loops_pipeline(o).front()}, "k"));
  Kernel after = tile::reciprocal_divisors(before);
  EXPECT_EQ(problems_text(tile::verify(after)), "") << tile::print(after);
  const Divisions b = divisions(before), a = divisions(after);
  EXPECT_EQ(b.vector_invariant, 1) << tile::print(before);
  EXPECT_EQ(a.vector_invariant, 0) << tile::print(after);
  EXPECT_EQ(a.reciprocals, b.reciprocals + 1);
  EXPECT_EQ(a.vector_varying, b.vector_varying);
  EXPECT_EQ(b.vector_varying, 1);
  EXPECT_NE(tile::print(after).find("mul(t"), std::string::npos) << tile::print(after);
  std::vector<Tensor> in = random_inputs(g, 31);
  expect_close(tile::interpret(after, in), tile::interpret(before, in), 1e-14, 0, "reciprocal");
  // Serial loops keep their divisions.
  Kernel serial = tile::lower_with(g, {tile::loops_pipeline(o).front()}, "k");
  EXPECT_EQ(tile::print(tile::reciprocal_divisors(serial)), tile::print(serial));
}

TEST(tile_exp2_scaled, ExpOfAScaledValueInAVectorLoopIsAPowerOfTwo) {
  // exp(x * 0.75) and exp(x * max) fold; exp(-x) and exp(x * x) (no
  // invariant factor) do not.
  Graph g = make_graph({{"x", {DType::F32, {6, 40}}}});
  NodeId x = param(g, 0);
  NodeId mx = broadcast(g, reshape(g, reduce(g, Op::ReduceMax, x, {1}), {6, 1}), {6, 40});
  g.outputs = {unary(g, Op::Exp, binary(g, Op::Mul, x, splat(g, 0.75, DType::F32, {6, 40}))),
               unary(g, Op::Exp, binary(g, Op::Mul, mx, x)), unary(g, Op::Exp, unary(g, Op::Neg, x)),
               unary(g, Op::Exp, binary(g, Op::Mul, x, x))};
  tile::LoopsOptions o;
  Kernel before = tile::vectorize(tile::lower_with(g, {tile::loops_pipeline(o).front()}, "k"));
  Kernel after = tile::exp2_scaled(before);
  EXPECT_EQ(problems_text(tile::verify(after)), "") << tile::print(after);
  const std::string text = tile::print(after);
  size_t pows = 0, exps = 0;  // in statements, not the comments naming graph nodes
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) {
    if (l.find("//") != std::string::npos) continue;
    for (size_t at = l.find("pow(2, "); at != std::string::npos; at = l.find("pow(2, ", at + 1)) ++pows;
    for (size_t at = l.find("exp("); at != std::string::npos; at = l.find("exp(", at + 1)) ++exps;
  }
  EXPECT_EQ(pows, 2u) << text;
  EXPECT_EQ(exps, 2u) << text;
  EXPECT_NE(text.find("_log2e: register f32[]"), std::string::npos) << text;
  // 2^(x fl32(c log2 e)) against exp(c x): the scale's one rounding, |c x| < 4.
  std::vector<Tensor> in = random_inputs(g, 33);
  expect_close(tile::interpret(after, in), tile::interpret(before, in), 4 * 6e-8, 0, "exp2");
  // Serial loops are left alone.
  Kernel serial = tile::lower_with(g, {tile::loops_pipeline(o).front()}, "k");
  EXPECT_EQ(tile::print(tile::exp2_scaled(serial)), tile::print(serial));
}

TEST(tile_prefetch_rows, TheFirstVectorLoopReadingARowPrefetchesEachInputAhead) {
  // softmax of x + y, fused over rows: the max loop reads x and y first.
  Graph g = make_graph({{"x", {DType::F32, {8, 100}}}, {"y", {DType::F32, {8, 100}}}});
  NodeId z = binary(g, Op::Add, param(g, 0), param(g, 1));
  NodeId m = broadcast(g, reshape(g, reduce(g, Op::ReduceMax, z, {1}), {8, 1}), {8, 100});
  NodeId e = unary(g, Op::Exp, binary(g, Op::Sub, z, m));
  g.outputs = {binary(g, Op::Div, e, broadcast(g, reshape(g, reduce(g, Op::ReduceSum, e, {1}), {8, 1}), {8, 100}))};
  tile::LoopsOptions o;
  Kernel before = tile::lower_with(g, tile::loops_pipeline(o), "k");
  Kernel after = tile::prefetch_rows(before, 4096);
  EXPECT_EQ(problems_text(tile::verify(after)), "") << tile::print(after);
  std::vector<std::string> fetched;
  int vector_loops_with = 0;
  for (const LoopInfo& l : loops_of(after)) {
    int here = 0;
    tile::visit(l.loop, [&](const Stmt& x) {
      if (x.kind() != StmtKind::Prefetch) return;
      ++here;
      EXPECT_EQ(x->ahead, 4096);
      fetched.push_back(after.buffers[x->buffer].name);
    });
    if (l.innermost && here > 0) {
      ++vector_loops_with;
      EXPECT_EQ(l.loop->loop, LoopKind::Vectorized);
    }
  }
  EXPECT_EQ(vector_loops_with, 1) << tile::print(after);
  std::sort(fetched.begin(), fetched.end());
  EXPECT_EQ(fetched, (std::vector<std::string>{"x", "x", "y", "y"}));  // counted in the row loop and the vector loop
  EXPECT_NE(tile::print(after).find("+ 4096 bytes, non-temporal"), std::string::npos);
  std::vector<Tensor> in = random_inputs(g, 41);
  expect_exact(tile::interpret(after, in), tile::interpret(before, in), "prefetched");
  EXPECT_EQ(tile::print(tile::prefetch_rows(before, 0)), tile::print(before));
  // Compiled: the prefetches run past the inputs' ends on the last rows.
  codegen::TileCppOptions po;
  po.vector_bits = 256;
  codegen::KernelSource src = codegen::print_tile_cpp(after, g, "a test kernel", po);
  EXPECT_NE(src.source.find("__builtin_prefetch(reinterpret_cast<const void*>"), std::string::npos);
}

// With a leaf block of 64 x P, the innermost loop of a unit-stride float32
// sum takes blocks of 64 P terms (P lane partials of the printer, each then
// adding at most 64), the loops over blocks at most 64; a strided sum keeps
// blocks of 64.
TEST(tile_cascade_sums, LeafBlocksOfLanePartials) {
  Graph g = make_graph({{"r", {DType::F32, {3, 70001}}}, {"c", {DType::F32, {5000, 3}}}});
  g.outputs = {reduce(g, Op::ReduceSum, param(g, 0), {1}), reduce(g, Op::ReduceSum, param(g, 1), {0})};
  Kernel before = tile::lower_graph(g, "k");
  const int64_t leaf = 64 * 64;
  Kernel after = tile::cascade_sums(before, leaf);
  EXPECT_EQ(problems_text(tile::verify(after)), "") << tile::print(after);
  std::vector<int64_t> leaves;
  for (const LoopInfo& l : loops_of(after)) {
    bool sum = false;
    tile::visit(l.loop, [&](const Stmt& s) { sum |= s.kind() == StmtKind::Accumulate && s->combine == Combine::Sum; });
    if (!sum) continue;
    if (l.innermost) leaves.push_back(l.loop->extent.value());
    else EXPECT_LE(l.loop->extent.value(), tile::kCascadeBlock) << l.loop->var;
  }
  // The row sum: 17 blocks of 4096 and a tail of 369; the column sum
  // (stride 3): 78 blocks of 64 (a block of 64 blocks, a tail of 14) and a
  // tail of 8.
  std::sort(leaves.begin(), leaves.end());
  EXPECT_EQ(leaves, (std::vector<int64_t>{8, 64, 64, 369, leaf})) << tile::print(after);
  std::vector<Tensor> in = random_inputs(g, 8, 0.5, 2);
  expect_close(tile::interpret(after, in), verify::interpret(g, in), 1e-13, 0, "cascaded");
  EXPECT_THROW(tile::cascade_sums(before, 100), InternalError);
}

// Sums over the channel axis of NCHW (96 terms: cascaded into blocks; a
// max) accumulate into per-lane scratch arrays with the channel loops
// outside, values bit for bit as before; a sum over the contiguous last axis
// keeps its register accumulator.
TEST(tile_interchange_sums, ChannelSumsAccumulateAlongTheContiguousAxis) {
  Graph g = make_graph({{"x", {DType::F32, {4, 96, 10, 12}}}});
  NodeId x = param(g, 0);
  g.outputs = {reduce(g, Op::ReduceSum, x, {1}), reduce(g, Op::ReduceMax, x, {1}), reduce(g, Op::ReduceSum, x, {3})};
  Kernel before = tile::cascade_sums(tile::lower_graph(g, "k"));
  Kernel after = tile::interchange_sums(before);
  EXPECT_EQ(problems_text(tile::verify(after)), "");
  int register_sums = 0, lane_sums = 0, lane_maxes = 0;
  tile::visit(after.body, [&](const Stmt& s) {
    if (s.kind() != StmtKind::Accumulate) return;
    const Scope scope = after.buffers[s->buffer].scope;
    if (scope == Scope::Register) ++register_sums;
    if (scope == Scope::Scratch) (s->combine == Combine::Max ? lane_maxes : lane_sums) += 1;
  });
  EXPECT_EQ(register_sums, 1) << tile::print(after);  // the sum over axis 3
  EXPECT_EQ(lane_sums, 4) << tile::print(after);  // 96 = a block of 64 and a tail of 32, each summed, then added up
  EXPECT_EQ(lane_maxes, 1) << tile::print(after);
  // The innermost loop of every lane accumulation that reads x runs along
  // x's last (contiguous) axis.
  for (const LoopInfo& l : loops_of(after)) {
    bool lanes = false;
    tile::visit(l.loop, [&](const Stmt& s) {
      lanes |= s.kind() == StmtKind::Accumulate && after.buffers[s->buffer].scope == Scope::Scratch;
    });
    if (!lanes || !l.innermost) continue;
    bool reads_x = false, contiguous = false;
    tile::visit(l.loop, [&](const Stmt& s) {
      if (s.kind() == StmtKind::Accumulate && s->value.defined())
        s->value.visit_loads([&](const tile::Value& v) {
          if (v.buffer() != 0) return;  // x; the others are the lane arrays
          reads_x = true;
          if (v.idx().back().kind() == tile::IndexKind::Var) contiguous |= v.idx().back().name() == l.loop->var;
        });
    });
    if (reads_x) EXPECT_TRUE(contiguous) << l.loop->var << "\n" << tile::print(after);
  }
  std::vector<Tensor> in = random_inputs(g, 31);
  expect_exact(tile::interpret(after, in), tile::interpret(before, in), "interchanged");
  // Nothing to gain where the summed axis is the contiguous one.
  Graph rows = make_graph({{"x", {DType::F32, {40, 30}}}});
  rows.outputs = {reduce(rows, Op::ReduceSum, param(rows, 0), {1})};
  Kernel r = tile::lower_graph(rows, "k");
  EXPECT_EQ(tile::print(tile::interchange_sums(r)), tile::print(r));
}

// A kept axis too long for lane arrays (20480 floats, 80 KB) is cut into
// blocks of 4096 (its largest divisor within 16 KB), each block's sums
// interchanged: the same values; the block loop then runs on threads.
TEST(tile_interchange_sums, AKeptAxisTooLongForLanesIsStripMined) {
  Graph g = make_graph({{"x", {DType::F32, {40, 20480}}}});
  g.outputs = {reduce(g, Op::ReduceSum, param(g, 0), {0})};
  Kernel before = tile::cascade_sums(tile::lower_graph(g, "k"));
  Kernel after = tile::interchange_sums(before);
  EXPECT_EQ(problems_text(tile::verify(after)), "");
  std::set<int64_t> lane_shapes;
  tile::visit(after.body, [&](const Stmt& s) {
    if (s.kind() == StmtKind::Alloc && after.buffers[s->buffer].scope == Scope::Scratch)
      lane_shapes.insert(after.buffers[s->buffer].shape.at(0));
  });
  EXPECT_EQ(lane_shapes, std::set<int64_t>{4096}) << tile::print(after);
  std::vector<LoopInfo> top;
  for (const LoopInfo& l : loops_of(after))
    if (l.depth == 0) top.push_back(l);
  ASSERT_EQ(top.size(), 1u) << tile::print(after);
  EXPECT_EQ(top[0].loop->extent.value(), 5);
  std::vector<Tensor> in = random_inputs(g, 32);
  expect_exact(tile::interpret(after, in), tile::interpret(before, in), "strip-mined");
  Kernel par = tile::parallelize(after, 2);
  for (const LoopInfo& l : loops_of(par))
    if (l.depth == 0) EXPECT_EQ(l.loop->loop, LoopKind::Parallel) << tile::print(par);
  // An extent with no divisor in [256, 4096] stays as it was.
  Graph prime = make_graph({{"x", {DType::F32, {4, 20011}}}});
  prime.outputs = {reduce(prime, Op::ReduceSum, param(prime, 0), {0})};
  Kernel p = tile::cascade_sums(tile::lower_graph(prime, "k"));
  EXPECT_EQ(tile::print(tile::interchange_sums(p)), tile::print(p));
}

// The top-level loops of `k` that read buffer `b`.
int top_loops_reading(const Kernel& k, int b) {
  int n = 0;
  for (const Stmt& s : k.body->body) {
    if (s.kind() != StmtKind::For) continue;
    bool reads = false;
    tile::visit(s, [&](const Stmt& x) {
      if (x->value.defined()) reads |= x->value.uses_buffer(b);
    });
    n += reads;
  }
  return n;
}

// np.sum(A @ B) as sum_into_contraction rewrites it: the column sums of A
// dotted with the row sums of B. Both sums loop over 128 (A's columns, B's
// rows), but the column sum is interchange_sums' to take, so fuse_loops
// keeps it apart and it becomes lane sums along A's rows; the row sum of B
// and the row max of C, which read rows, still fuse.
TEST(tile_fuse_loops, AColumnSumIsNotFusedAndBecomesLaneSums) {
  Graph g = make_graph({{"A", {DType::F32, {96, 128}}}, {"B", {DType::F32, {128, 80}}}, {"C", {DType::F32, {128, 80}}}});
  NodeId cols = reduce(g, Op::ReduceSum, param(g, 0), {0});
  NodeId rows = reduce(g, Op::ReduceSum, param(g, 1), {1});
  NodeId row_max = reduce(g, Op::ReduceMax, param(g, 2), {1});
  g.outputs = {einsum(g, "k,k->", cols, rows), row_max};
  Kernel lowered = tile::inline_maps(tile::lower_graph(g, "k"));
  Kernel fused = tile::fuse_loops(lowered);
  EXPECT_EQ(problems_text(tile::verify(fused)), "");
  EXPECT_EQ(top_loops_reading(fused, 0), 1) << tile::print(fused);
  bool a_with_other = false, b_with_c = false;
  for (const Stmt& s : fused.body->body) {
    if (s.kind() != StmtKind::For) continue;
    std::set<int> read;
    tile::visit(s, [&](const Stmt& x) {
      if (x->value.defined())
        x->value.visit_loads([&](const Value& l) { read.insert(l.buffer()); });
    });
    a_with_other |= read.count(0) && (read.count(1) || read.count(2));
    b_with_c |= read.count(1) && read.count(2);
  }
  EXPECT_FALSE(a_with_other) << tile::print(fused);
  EXPECT_TRUE(b_with_c) << tile::print(fused);
  // Then the column sum accumulates in lanes, its innermost loops along A's
  // rows (unit stride).
  Kernel after = tile::interchange_sums(tile::cascade_sums(fused));
  EXPECT_EQ(problems_text(tile::verify(after)), "");
  int lane_sums_of_a = 0;
  for (const LoopInfo& l : loops_of(after)) {
    if (!l.innermost) continue;
    tile::visit(l.loop, [&](const Stmt& s) {
      if (s.kind() != StmtKind::Accumulate || after.buffers[s->buffer].scope != Scope::Scratch) return;
      s->value.visit_loads([&](const Value& ld) {
        if (ld.buffer() != 0) return;
        ++lane_sums_of_a;
        ASSERT_EQ(ld.idx().back().kind(), tile::IndexKind::Var) << tile::print(after);
        EXPECT_EQ(ld.idx().back().name(), l.loop->var) << tile::print(after);
      });
    });
  }
  EXPECT_GT(lane_sums_of_a, 0) << tile::print(after);
  std::vector<Tensor> in = random_inputs(g, 33);
  expect_close(tile::interpret(after, in), verify::interpret(g, in), 1e-12, 1e-12, "fused and interchanged");
}

// ============================================================================
// parallel_sums
// ============================================================================

// The passes of the loops pipeline up to parallel_sums at `threads`, with
// reductions split (cascade_sums, interchange_sums, parallelize).
Kernel before_parallel_sums(const Graph& g, int threads) {
  return tile::parallelize(tile::interchange_sums(tile::cascade_sums(tile::lower_graph(g, "k"))), threads);
}

// The Accumulates into partials of a parallel loop, by combine, and whether
// each such loop stores its partials in a slot per iteration.
struct SplitShape {
  std::map<Combine, int> partial_accumulates;
  int parallel_loops = 0;
};
SplitShape split_shape(const Kernel& k) {
  SplitShape out;
  for (const LoopInfo& l : loops_of(k)) {
    if (l.loop->loop != LoopKind::Parallel) continue;
    ++out.parallel_loops;
    tile::visit(l.loop, [&](const Stmt& s) {
      if (s.kind() == StmtKind::Accumulate && k.buffers[s->buffer].name.find("_part") != std::string::npos)
        ++out.partial_accumulates[s->combine];
    });
  }
  return out;
}

// logsumexp of a whole f32[700, 96] tensor, an axis-0 sum of f32[1000, 40]
// and an axis-0 max of f32[1000, 48]: the reductions parallel_sums splits.
Graph split_reductions_graph() {
  Graph g = make_graph(
      {{"x", {DType::F32, {700, 96}}}, {"y", {DType::F32, {1000, 40}}}, {"z", {DType::F32, {1000, 48}}}});
  NodeId x = param(g, 0);
  NodeId m = reduce(g, Op::ReduceMax, x, {0, 1});
  NodeId shifted = binary(g, Op::Sub, x, broadcast(g, reshape(g, m, {1, 1}), {700, 96}));
  g.outputs = {binary(g, Op::Add, unary(g, Op::Log, reduce(g, Op::ReduceSum, unary(g, Op::Exp, shifted), {0, 1})), m),
               reduce(g, Op::ReduceSum, param(g, 1), {0}), reduce(g, Op::ReduceMax, param(g, 2), {0})};
  return g;
}

// A whole tensor's max and sum (logsumexp's two reductions) and axis-0 sums
// and maxima of tall matrices (kept extents 40 and 48, in per-lane partials)
// are cut
// into one chunk per thread, each folding into private partials that are
// combined in order: the max exactly, the sums within float64 rounding of
// the unsplit program. 2, 3 and 5 threads: chunks of unequal length.
TEST(tile_parallel_sums, WholeTensorAndAxis0ReductionsAreSplitAcrossThreads) {
  Graph g = split_reductions_graph();
  std::vector<Tensor> in = random_inputs(g, 41);
  for (int threads : {2, 3, 5}) {
    const std::string what = std::to_string(threads) + " threads";
    Kernel before = before_parallel_sums(g, threads);
    Kernel after = tile::parallel_sums(before, threads);
    EXPECT_EQ(problems_text(tile::verify(after)), "") << what;
    SplitShape sh = split_shape(after);
    // The whole max, the whole sum's blocks, the axis-0 sum's blocks and
    // the axis-0 max (the sums' tails of 60 and 40 rows are too short).
    EXPECT_EQ(sh.parallel_loops, split_shape(before).parallel_loops + 4) << what << "\n" << tile::print(after);
    EXPECT_EQ(sh.partial_accumulates[Combine::Max], 2) << what << "\n" << tile::print(after);
    EXPECT_EQ(sh.partial_accumulates[Combine::Sum], 2) << what << "\n" << tile::print(after);
    // Every new parallel loop runs one chunk per thread.
    int chunked = 0;
    for (const LoopInfo& l : loops_of(after)) {
      bool partials = false;
      tile::visit(l.loop, [&](const Stmt& s) {
        partials |= s.kind() == StmtKind::Alloc && after.buffers[s->buffer].name.find("_part") != std::string::npos;
      });
      if (l.loop->loop != LoopKind::Parallel || !partials) continue;
      ++chunked;
      EXPECT_EQ(l.loop->extent.value(), threads) << what;
      EXPECT_EQ(l.loop->threads, threads) << what;
    }
    EXPECT_EQ(chunked, 4) << what;
    std::vector<Tensor> got = tile::interpret(after, in), want = tile::interpret(before, in);
    expect_close(got, want, 1e-13, 1e-13, what);
    // The maxima are the same numbers, in any order.
    EXPECT_EQ(got[2].data, want[2].data) << what;
    expect_close(got, verify::interpret(g, in), 1e-12, 1e-12, what + " against the graph");
  }
}

// Left alone: a row sum (its rows are parallelize's), a sum too short to pay
// (below kParallelMinPoints), a reduction on one thread, and a loop that
// also stores per iteration into a buffer used after it.
TEST(tile_parallel_sums, RowSumsShortSumsAndOneThreadAreLeftAlone) {
  Graph rows = make_graph({{"x", {DType::F32, {512, 300}}}});
  rows.outputs = {reduce(rows, Op::ReduceSum, param(rows, 0), {1})};
  Kernel r = before_parallel_sums(rows, 2);
  EXPECT_EQ(split_shape(r).parallel_loops, 1);
  EXPECT_EQ(tile::print(tile::parallel_sums(r, 2)), tile::print(r));
  Graph shortg = make_graph({{"x", {DType::F32, {100, 300}}}});
  shortg.outputs = {reduce(shortg, Op::ReduceSum, param(shortg, 0), {0, 1})};
  Kernel s = before_parallel_sums(shortg, 2);
  EXPECT_EQ(tile::print(tile::parallel_sums(s, 2)), tile::print(s));
  Graph big = make_graph({{"x", {DType::F32, {700, 96}}}});
  big.outputs = {reduce(big, Op::ReduceMax, param(big, 0), {0, 1})};
  Kernel b = before_parallel_sums(big, 1);
  EXPECT_EQ(tile::print(tile::parallel_sums(b, 1)), tile::print(b));
  EXPECT_NE(tile::print(tile::parallel_sums(b, 2)), tile::print(b));
  // A loop that stores a running value into an output as it sums.
  SmallKernel h;
  int acc = h.add("acc", Scope::Register);
  h.k.buffers[h.out].shape = {4};
  Stmt loop = for_("r", 1 << 16,
                   Stmt::seq({Stmt::accumulate(acc, {}, Combine::Sum, f32(1)),
                              Stmt::store(h.out, {Index(0)}, Value::load(acc, {}, DType::F32))}));
  h.k.body = Stmt::seq({Stmt::alloc(acc), Stmt::store(acc, {}, f32(0)), loop,
                        for_("j", 4, Stmt::store(h.out, {v("j")}, Value::load(acc, {}, DType::F32)))});
  ASSERT_EQ(problems_text(tile::verify(h.k)), "");
  EXPECT_EQ(tile::print(tile::parallel_sums(h.k, 2)), tile::print(h.k));
}

// ============================================================================
// The loops pipeline as C++
// ============================================================================

void expect_loops_pipeline_runs(const Graph& g, int threads, uint32_t seed, const std::string& what) {
  ASSERT_TRUE(kGompPinned);
  tile::LoopsOptions o;
  o.threads = threads;
  std::vector<tile::Stage> stages = tile::run_pipeline(g, tile::loops_pipeline(o), "k");
  ASSERT_EQ(stages.front().pass, "lower");
  std::vector<Tensor> in = random_inputs(g, seed);
  std::vector<Tensor> want = verify::interpret(g, in);
  for (const tile::Stage& s : stages) {
    EXPECT_EQ(problems_text(tile::verify(s.kernel)), "") << what << " after " << s.pass;
    expect_close(tile::interpret(s.kernel, in), want, 1e-12, 1e-12, what + " interpreted after " + s.pass);
  }
  const Kernel& last = stages.back().kernel;
  int parallel = 0;
  for (const LoopInfo& l : loops_of(last)) parallel += l.loop->loop == LoopKind::Parallel;
  if (threads > 1) {
    EXPECT_GT(parallel, 0) << what << "\n" << tile::print(last);
  }
  codegen::KernelSource src = codegen::print_tile_cpp(last, g, "a test kernel");
  // float32 arithmetic: sums of up to a hundred terms of magnitude ~1 may
  // cancel, so an absolute term joins the relative one.
  expect_close(run_compiled(src, g, in, true), want, 1e-5, 1e-4, what + " compiled");
}

TEST(tile_cpp, LoopsPipelineSoftmax) { expect_loops_pipeline_runs(softmax_graph(64, 600), 4, 20, "softmax"); }

TEST(tile_cpp, LoopsPipelineChannelSumOfNCHW) {
  Graph g = make_graph({{"x", {DType::F32, {4, 96, 10, 12}}}});
  NodeId x = param(g, 0);
  g.outputs = {reduce(g, Op::ReduceSum, x, {1}), reduce(g, Op::ReduceMax, x, {1})};
  expect_loops_pipeline_runs(g, 4, 21, "sum over axis 1 of NCHW");
}

TEST(tile_cpp, LoopsPipelineMatmulBiasRelu) {
  Graph g = make_graph({{"a", {DType::F32, {96, 80}}}, {"b", {DType::F32, {80, 72}}}, {"c", {DType::F32, {72}}}});
  NodeId m = einsum(g, "ij,jk->ik", param(g, 0), param(g, 1));
  NodeId y = binary(g, Op::Add, m, broadcast(g, reshape(g, param(g, 2), {1, 72}), {96, 72}));
  g.outputs = {binary(g, Op::Maximum, y, splat(g, 0.0, DType::F32, {96, 72}))};
  expect_loops_pipeline_runs(g, 4, 22, "matmul + bias + relu");
}

TEST(tile_cpp, LoopsPipelineLongSumAndTransposedMap) {
  Graph g = make_graph({{"v", {DType::F32, {100000}}}, {"m", {DType::F32, {300, 200}}}});
  NodeId t = transpose(g, param(g, 1), {1, 0});
  g.outputs = {reduce(g, Op::ReduceSum, param(g, 0), {0}), binary(g, Op::Mul, t, unary(g, Op::Tanh, t))};
  expect_loops_pipeline_runs(g, 2, 23, "long sum and transposed map");
}

// Split reductions compiled: logsumexp of a whole tensor, an axis-0 sum and
// max, on 2 and 3 threads (chunks of unequal length), against the float64
// interpreter; the programs do split them.
TEST(tile_cpp, LoopsPipelineSplitReductions) {
  Graph g = split_reductions_graph();
  for (int threads : {2, 3}) {
    tile::LoopsOptions o;
    o.threads = threads;
    SplitShape sh = split_shape(tile::lower_with(g, tile::loops_pipeline(o), "k"));
    EXPECT_EQ(sh.partial_accumulates[Combine::Max], 2) << threads;
    expect_loops_pipeline_runs(g, threads, 24, "split reductions on " + std::to_string(threads) + " threads");
  }
}

TEST(tile_cpp, RefusesAGpuBlockLoop) {
  Graph g = make_graph({{"x", {DType::F32, {4, 8}}}});
  g.outputs = {unary(g, Op::Exp, param(g, 0))};
  Kernel k = tile::lower_graph(g, "k");
  EXPECT_NO_THROW(codegen::print_tile_cpp(k, g, "cpu"));
  bool changed = false;
  k.body = tile::rewrite(k.body, [&](const Stmt& s) {
    if (s.kind() != StmtKind::For || changed) return s;
    changed = true;
    return s.with([](tile::StmtNode& n) { n.loop = LoopKind::GpuBlock; });
  });
  ASSERT_TRUE(changed);
  EXPECT_THROW(codegen::print_tile_cpp(k, g, "cpu"), InternalError);
}

TEST(tile_cpp, SiblingSequencesAtTheTopEachScopeTheirAllocations) {
  // The verifier ends a buffer's life with the Seq that allocates it, so two
  // sibling Seqs of the body may each allocate the same register (and the
  // same Memory buffer); the printed C++ must scope each declaration.
  Graph g = make_graph({{"X", {DType::F32, {4, 4}}}});
  g.outputs = {reduce(g, Op::ReduceSum, param(g, 0), {1})};
  SmallKernel s;
  int acc = s.add("acc", Scope::Register);
  int tmp = s.add("tmp", Scope::Memory, {4});
  std::vector<Stmt> body;
  for (int64_t row = 0; row < 4; ++row)
    body.push_back(Stmt::seq({Stmt::alloc(acc), Stmt::store(acc, {}, f32(0)), Stmt::alloc(tmp),
                              for_("j", 4, Stmt::store(tmp, {v("j")}, s.x_at(Index(row), v("j")))),
                              for_("r", 4, Stmt::accumulate(acc, {}, Combine::Sum, Value::load(tmp, {v("r")}, DType::F32))),
                              Stmt::free(tmp), Stmt::store(s.out, {Index(row)}, Value::load(acc, {}, DType::F32))}));
  s.k.body = Stmt::seq(std::move(body));
  ASSERT_EQ(problems_text(tile::verify(s.k)), "");
  std::vector<Tensor> in = random_inputs(g, 30);
  std::vector<Tensor> want = verify::interpret(g, in);
  expect_exact(tile::interpret(s.k, in), want, "hand-built row sums");
  codegen::KernelSource src = codegen::print_tile_cpp(s.k, g, "a test kernel");
  expect_close(run_compiled(src, g, in, false), want, 1e-6, 1e-6, "sibling scopes compiled");
}

// ============================================================================
// Determinism
// ============================================================================

TEST(tile_determinism, PrintingAndLoweringTwiceGiveTheSameText) {
  Graph g = softmax_graph(16, 32);
  Kernel a = tile::lower_graph(g, "k"), b = tile::lower_graph(g, "k");
  EXPECT_EQ(tile::print(a), tile::print(a));
  EXPECT_EQ(tile::print(a), tile::print(b));
  tile::LoopsOptions o;
  o.threads = 4;
  Kernel la = tile::lower_with(g, tile::loops_pipeline(o), "k"), lb = tile::lower_with(g, tile::loops_pipeline(o), "k");
  EXPECT_EQ(tile::print(la), tile::print(lb));
  EXPECT_EQ(codegen::print_tile_cpp(la, g, "x").source, codegen::print_tile_cpp(lb, g, "x").source);
  EXPECT_NE(tile::print(la), tile::print(a));  // the passes did change the program
}

}  // namespace
}  // namespace axon
