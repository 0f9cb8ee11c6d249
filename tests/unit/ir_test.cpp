// The graph IR: hash-consing, builder checks, printer, structural hash.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ir/printer.h"
#include "ir/verify.h"

using namespace axon::ir;

namespace {
Graph two_inputs(Shape a, Shape b) {
  Graph g;
  g.entry = "f";
  g.params = {{"a", {DType::F32, a}}, {"b", {DType::F32, b}}};
  return g;
}
}  // namespace

TEST(ir, HashConsingSharesIdenticalNodes) {
  Graph g = two_inputs({4, 3}, {4, 3});
  NodeId a = param(g, 0), b = param(g, 1);
  NodeId x = binary(g, Op::Add, a, b);
  NodeId y = binary(g, Op::Add, a, b);
  EXPECT_EQ(x, y);
  EXPECT_NE(binary(g, Op::Add, b, a), x);  // no canonicalisation of operand order here
  EXPECT_EQ(g.size(), 4);
}

TEST(ir, ConstantsCompareByBits) {
  Graph g;
  NodeId p = constant(g, 0.0, DType::F32);
  NodeId m = constant(g, -0.0, DType::F32);
  EXPECT_NE(p, m);
}

TEST(ir, BuilderRejectsShapeMismatchAsInternalError) {
  Graph g = two_inputs({4, 3}, {3});
  NodeId a = param(g, 0), b = param(g, 1);
  EXPECT_THROW(binary(g, Op::Add, a, b), axon::InternalError);
  EXPECT_THROW(broadcast(g, b, {4, 3}), axon::InternalError);  // rank must match
  EXPECT_THROW(einsum(g, "ij,jk->ik", a, a), axon::InternalError);
  EXPECT_THROW(reshape(g, a, {5, 2}), axon::InternalError);
}

TEST(ir, EinsumInfersShapeAndReducedLabels) {
  Graph g = two_inputs({2, 4, 3}, {2, 3, 5});
  NodeId m = einsum(g, "bij,bjk->bik", param(g, 0), param(g, 1));
  EXPECT_EQ(g[m].type.shape, (Shape{2, 4, 5}));
  EinsumSpec s;
  ASSERT_TRUE(parse_einsum("bij,bjk->bik", &s));
  EXPECT_EQ(s.reduced(), "j");
  EXPECT_FALSE(parse_einsum("ij,jk->iz", &s));
  EXPECT_FALSE(parse_einsum("ij->ij", &s));
}

TEST(ir, PrinterIsStable) {
  Graph g = two_inputs({2, 3}, {3});
  NodeId a = param(g, 0);
  NodeId b = broadcast(g, reshape(g, param(g, 1), {1, 3}), {2, 3});
  NodeId s = reduce(g, Op::ReduceSum, binary(g, Op::Mul, a, b), {1});
  g.outputs = {s};
  EXPECT_EQ(print(g),
            "func f(a: f32[2, 3], b: f32[3]) -> (f32[2]) {\n"
            "  %0: f32[2, 3] = param() {index = 0, name = \"a\"}\n"
            "  %1: f32[3] = param() {index = 1, name = \"b\"}\n"
            "  %2: f32[1, 3] = reshape(%1)\n"
            "  %3: f32[2, 3] = broadcast(%2)\n"
            "  %4: f32[2, 3] = mul(%0, %3)\n"
            "  %5: f32[2] = reduce_sum(%4) {axes = [1]}\n"
            "  return %5\n"
            "}\n");
}

TEST(ir, StructuralHashIgnoresDeadNodesAndNumbering) {
  Graph g1 = two_inputs({3}, {3});
  NodeId a1 = param(g1, 0), b1 = param(g1, 1);
  unary(g1, Op::Exp, a1);  // dead
  g1.outputs = {binary(g1, Op::Mul, a1, b1)};
  Graph g2 = two_inputs({3}, {3});
  NodeId b2 = param(g2, 1), a2 = param(g2, 0);
  g2.outputs = {binary(g2, Op::Mul, a2, b2)};
  EXPECT_EQ(g1.structural_hash(), g2.structural_hash());
  EXPECT_EQ(g1.structural_hash(), compact(g1).structural_hash());
  EXPECT_EQ(compact(g1).size(), 3);
  g2.outputs = {binary(g2, Op::Mul, b2, a2)};
  EXPECT_NE(g1.structural_hash(), g2.structural_hash());
  verify(compact(g1));
}
