// The layout copy as a tile program (tile/lower_copy.h), program in ->
// program out: for odd shapes (1, 7, 33 and 100 on each axis of a 2-D
// transpose, 3-D and 4-D permutations, strided and broadcast views) and
// every schedule, the verifier accepts the program and tile::interpret
// writes exactly the transpose; its loops and blocks are the ones the
// schedule asks for. Then the printed kernel (tile_cpp.h's register
// transposes, collapsed parallel loops and streaming stores) compiled for
// AVX2 and, where the host has it, AVX-512, on random shapes and schedules.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "codegen/c_like/tile_cpp.h"
#include "codegen/cpu/emit_cpu.h"
#include "cpu_test_support.h"
#include "runtime/compile_shared.h"
#include "runtime/loaded_kernel.h"
#include "runtime/run_check.h"
#include "tile/interpret.h"
#include "tile/lower_copy.h"
#include "tile/print.h"
#include "tile/verify.h"

namespace axon {
namespace {

using tile::CopySchedule;
using tile::CopyShape;
using tile::Kernel;
using tile::LoopKind;
using tile::Stmt;
using tile::StmtKind;

// The copy of `in` (shape `in_shape`) permuted by `perm`, as numpy's transpose.
CopyShape permutation(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& perm,
                      ir::DType d = ir::DType::F32) {
  const std::vector<int64_t> st = ir::row_major_strides(in_shape);
  CopyShape c;
  c.dtype = d;
  for (int64_t a : perm) {
    c.shape.push_back(in_shape[static_cast<size_t>(a)]);
    c.in_strides.push_back(st[static_cast<size_t>(a)]);
  }
  return c;
}

// The input: element e holds e + 1 (distinct, exact in float).
std::vector<double> input_of(const CopyShape& c) {
  std::vector<double> v(static_cast<size_t>(tile::in_extent(c)));
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

// out[i...] = in[sum i[a] * in_strides[a]], in output order.
std::vector<double> expected(const CopyShape& c, const std::vector<double>& in) {
  int64_t n = 1;
  for (int64_t d : c.shape) n *= d;
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t e = 0; e < n; ++e) {
    int64_t rem = e, src = 0;
    for (size_t a = c.shape.size(); a-- > 0;) {
      src += rem % c.shape[a] * c.in_strides[a];
      rem /= c.shape[a];
    }
    out[static_cast<size_t>(e)] = in[static_cast<size_t>(src)];
  }
  return out;
}

std::string describe(const CopyShape& c, const CopySchedule& s) {
  std::string t = "shape [";
  for (size_t a = 0; a < c.shape.size(); ++a) t += (a ? ", " : "") + std::to_string(c.shape[a]);
  t += "] strides [";
  for (size_t a = 0; a < c.in_strides.size(); ++a) t += (a ? ", " : "") + std::to_string(c.in_strides[a]);
  return t + "] tile " + std::to_string(s.tile) + " threads " + std::to_string(s.threads) + " vector " +
         std::to_string(s.vector) + " width " + std::to_string(s.width) + " order " + std::to_string(s.order) +
         " band " + std::to_string(s.band) + " nt " + std::to_string(s.nt_store);
}

// Verified, and interpreted to exactly the transpose.
void expect_interprets_to_transpose(const CopyShape& c, const CopySchedule& s) {
  const std::string what = describe(c, s);
  Kernel k = tile::lower_copy(c, s, "copy");
  std::vector<std::string> problems = tile::verify(k);
  ASSERT_TRUE(problems.empty()) << what << "\n" << problems.front() << "\n" << tile::print(k);
  const std::vector<double> in = input_of(c);
  std::vector<ir::Tensor> out = tile::interpret(k, {ir::Tensor{ir::Type{c.dtype, {tile::in_extent(c)}}, in}});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<double> want = expected(c, in);
  ASSERT_EQ(out[0].data.size(), want.size()) << what;
  int bad = 0;
  for (size_t e = 0; e < want.size(); ++e)
    if (out[0].data[e] != want[e] && bad++ < 3)
      ADD_FAILURE() << what << ": element " << e << " is " << out[0].data[e] << ", want " << want[e] << "\n" << tile::print(k);
}

std::vector<CopySchedule> schedules() {
  std::vector<CopySchedule> r;
  for (int tile : {16, 32, 64})
    for (int threads : {1, 2}) {
      CopySchedule s;
      s.tile = tile, s.threads = threads, s.vector = false;
      r.push_back(s);
      for (int width : {8, 16})
        for (int order : {0, 1})
          for (int band : {1, 2, 4}) {
            if (band > 1 && (order == 1 || 16 * band > tile)) continue;
            s.vector = true, s.width = width, s.order = order, s.band = band, s.nt_store = band % 2 == 0 || order == 1;
            r.push_back(s);
          }
    }
  return r;
}

TEST(tile_lower_copy, TransposesOfOddPlanesInterpretExactly) {
  for (int64_t rows : {1, 7, 33, 100})
    for (int64_t cols : {1, 7, 33, 100})
      for (const CopySchedule& s : schedules()) expect_interprets_to_transpose(permutation({rows, cols}, {1, 0}), s);
}

TEST(tile_lower_copy, PermutationsOf3dAnd4dInterpretExactly) {
  std::vector<CopySchedule> few;
  for (const CopySchedule& s : schedules())
    if (s.tile == 16) few.push_back(s);
  std::vector<int64_t> p3 = {0, 1, 2};
  do {
    for (const CopySchedule& s : few) expect_interprets_to_transpose(permutation({7, 33, 17}, p3), s);
  } while (std::next_permutation(p3.begin(), p3.end()));
  std::vector<int64_t> p4 = {0, 1, 2, 3};
  do {
    for (const CopySchedule& s : {few[0], few[3], few[few.size() - 1]})
      expect_interprets_to_transpose(permutation({3, 1, 18, 20}, p4), s);
  } while (std::next_permutation(p4.begin(), p4.end()));
}

// A view that is not a permutation: every other column of a [40, 66] input
// transposed, a broadcast axis (stride 0), and 32-bit integers.
TEST(tile_lower_copy, StridedBroadcastAndIntegerViews) {
  CopyShape strided;
  strided.shape = {33, 40};
  strided.in_strides = {2, 66};
  CopyShape broadcast;
  broadcast.shape = {3, 24, 17};
  broadcast.in_strides = {0, 1, 24};
  CopyShape ints = permutation({19, 37}, {1, 0}, ir::DType::I32);
  for (const CopySchedule& s : schedules())
    if (s.tile <= 32)
      for (const CopyShape& c : {strided, broadcast, ints}) expect_interprets_to_transpose(c, s);
}

// The program has the form the schedule asks for: W x W blocks (streaming
// when asked and the rows are whole blocks), parallel loops with the
// schedule's threads, no scalar Copy in a plane of whole tiles, and a
// row-by-row program when the output's rows are the input's.
TEST(tile_lower_copy, BlocksLoopsAndStreamingFollowTheSchedule) {
  auto count = [](const Kernel& k, const std::function<bool(const Stmt&)>& f) {
    int n = 0;
    tile::visit(k.body, [&](const Stmt& s) { n += f(s) ? 1 : 0; });
    return n;
  };
  CopySchedule s;
  s.tile = 64, s.threads = 2, s.vector = true, s.width = 16, s.order = 0, s.band = 2, s.nt_store = true;
  Kernel k = tile::lower_copy(permutation({128, 256}, {1, 0}), s, "copy");
  EXPECT_GT(count(k, [](const Stmt& x) { return x.kind() == StmtKind::Copy && x->extents == std::vector<int64_t>{16, 16} && x->streaming; }), 0);
  EXPECT_EQ(count(k, [](const Stmt& x) { return x.kind() == StmtKind::Copy && x->extents != std::vector<int64_t>{16, 16}; }), 0)
      << tile::print(k);
  EXPECT_EQ(count(k, [](const Stmt& x) { return x.kind() == StmtKind::For && x->loop == LoopKind::Parallel && x->threads == 2; }), 2)
      << tile::print(k);
  // Rows of 100 are no whole number of blocks: no streaming stores.
  k = tile::lower_copy(permutation({100, 64}, {1, 0}), s, "copy");
  EXPECT_EQ(count(k, [](const Stmt& x) { return x.kind() == StmtKind::Copy && x->streaming; }), 0);
  // One thread: serial loops only.
  s.threads = 1;
  k = tile::lower_copy(permutation({128, 256}, {1, 0}), s, "copy");
  EXPECT_EQ(count(k, [](const Stmt& x) { return x.kind() == StmtKind::For && x->loop == LoopKind::Parallel; }), 0);
  // [4, 50, 60] -> [60, 4, 50]... with the last axis kept: whole rows.
  k = tile::lower_copy(permutation({4, 50, 60}, {1, 0, 2}), s, "copy");
  EXPECT_EQ(count(k, [](const Stmt& x) { return x.kind() == StmtKind::Copy && x->extents == std::vector<int64_t>{60}; }), 1)
      << tile::print(k);
}

// The verifier's mixed-radix rule: a parallel loop whose stride lies
// between a view's (an outer axis between the rows of a tile and its
// columns) is accepted when the terms nest, rejected when they overlap.
TEST(tile_lower_copy, VerifierAcceptsInterleavedStridesOnlyWhenDisjoint) {
  // out[c + o * o_stride + r * 16 + b * 32]: columns c < 4 and rows r < 2 of
  // a view, o < 4 parallel, b < 2 serial inside it.
  auto kernel = [](int64_t o_stride) {
    Kernel k;
    k.name = "k";
    const int64_t n = 3 * o_stride + 32 + 16 + 4;
    const int in = k.add_buffer({"input", ir::DType::F32, {n}, tile::Scope::Input, 0, -1});
    const int out = k.add_buffer({"output", ir::DType::F32, {n}, tile::Scope::Output, -1, 0});
    tile::Index off = tile::Index::var("o") * tile::Index(o_stride) + tile::Index::var("b") * tile::Index(32);
    Stmt copy = Stmt::copy({out, off, {16, 1}}, {in, off, {16, 1}}, {2, 4});
    Stmt b = Stmt::loop("b", tile::Index(2), LoopKind::Serial, copy);
    k.body = Stmt::loop("o", tile::Index(4), LoopKind::Parallel, b).with([](tile::StmtNode& n) { n.threads = 2; });
    return k;
  };
  // o by 4: every element of [0, 64) once; b and the view's rows lie above o.
  Kernel k = kernel(4);
  EXPECT_TRUE(tile::verify(k).empty()) << tile::verify(k).front();
  std::vector<double> in(64);
  std::iota(in.begin(), in.end(), 0.0);
  EXPECT_EQ(tile::interpret(k, {ir::Tensor{ir::Type{ir::DType::F32, {64}}, in}})[0].data, in);
  // o by 8: o = 2 lands where the view's second row does.
  std::vector<std::string> p = tile::verify(kernel(8));
  EXPECT_TRUE(p.size() == 1 && p[0].find("overlapping") != std::string::npos) << (p.empty() ? "accepted" : p[0]);
}

// ---- compiled ----

// Compiles the printed copy for `t`, runs it on a 64-byte aligned input,
// expects the transpose exactly.
void expect_compiled_transpose(const CopyShape& c, const CopySchedule& s, const target::Target& t) {
  const std::string what = describe(c, s) + " at " + std::to_string(t.isa.vector_bits());
  codegen::TileCppOptions o;
  o.vector_bits = t.isa.vector_bits();
  codegen::KernelSource src = codegen::print_tile_cpp(tile::lower_copy(c, s, "copy_under_test"), "a layout copy", o);
  runtime::CompileOptions co;
  co.flags = codegen::cpu_compile_flags(t, true);
  runtime::LoadedKernel kernel(runtime::compile_shared(src, co), src.entry);
  const std::vector<double> in = input_of(c);
  const std::vector<double> want = expected(c, in);
  std::vector<float, runtime::CacheLineAllocator<float>> fin(in.begin(), in.end()), fout(want.size() + 16, -1.0f);
  kernel.call({fin.data(), fout.data()});
  int bad = 0;
  for (size_t e = 0; e < want.size(); ++e)
    if (fout[e] != static_cast<float>(want[e]) && bad++ < 3) ADD_FAILURE() << what << ": element " << e;
  for (size_t e = want.size(); e < fout.size(); ++e)
    if (fout[e] != -1.0f && bad++ < 3) ADD_FAILURE() << what << ": wrote past the output at " << e;
}

TEST(tile_lower_copy, CompiledForAvx2AndAvx512OnRandomShapesAndSchedules) {
  ASSERT_TRUE(test::kGompPinned);
  std::mt19937 rng(11);
  const int64_t sizes[] = {1, 5, 8, 16, 17, 31, 48, 64, 100, 129};
  for (const target::Target& t : test::targets()) {
    if (t.isa.vector_bits() < 256) continue;
    std::vector<CopySchedule> all;
    for (const CopySchedule& s : schedules())
      if (!(s.vector && s.width == 16 && t.isa.vector_bits() < 512)) all.push_back(s);
    for (int rep = 0; rep < 8; ++rep) {
      const int rank = 2 + static_cast<int>(rng() % 3);
      std::vector<int64_t> shape;
      for (int a = 0; a < rank; ++a) shape.push_back(rank == 2 ? sizes[rng() % 10] : sizes[rng() % 7]);
      std::vector<int64_t> perm(static_cast<size_t>(rank));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      if (rep == 0) shape = {100, 129}, perm = {1, 0};
      expect_compiled_transpose(permutation(shape, perm), all[rng() % all.size()], t);
    }
  }
}

}  // namespace
}  // namespace axon
