// Unit tests of the numpy frontend: every workload parses to the expected
// types, numpy's semantics come out right in the IR, and bad specs fail at
// the right line:column with the right words.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "frontend/spec.h"
#include "ir/graph.h"
#include "ir/printer.h"

#ifndef AXON_SOURCE_DIR
#define AXON_SOURCE_DIR "."
#endif

namespace axon::frontend {
namespace {

using ir::DType;
using ir::Op;

Spec parse(const std::string& body, SpecOptions opts = {}) {
  return parse_spec("spec.py", "import numpy as np\n" + body, opts);
}

// The type of the single output.
std::string out_type(const Spec& s, size_t k = 0) {
  EXPECT_GT(s.graph.outputs.size(), k);
  return ir::type_str(s.graph[s.graph.outputs.at(k)].type);
}

int count_ops(const ir::Graph& g, Op op) {
  int n = 0;
  for (const ir::Node& node : g.nodes()) n += node.op == op;
  return n;
}

const ir::Node* find_op(const ir::Graph& g, Op op) {
  for (const ir::Node& node : g.nodes())
    if (node.op == op) return &node;
  return nullptr;
}

// Parses `body` (after an implicit "import numpy as np" on line 1) and
// expects a Diagnostic at line:col whose message contains `words`.
void expect_error(const std::string& body, int line, int col, const std::string& words, SpecOptions opts = {},
                  bool unsupported = false) {
  try {
    parse(body, opts);
    ADD_FAILURE() << "expected an error containing '" << words << "'";
  } catch (const Diagnostic& d) {
    EXPECT_EQ(d.loc().line, line) << d.what();
    EXPECT_EQ(d.loc().col, col) << d.what();
    EXPECT_NE(d.message().find(words), std::string::npos) << d.what();
    EXPECT_EQ(d.loc().file, "spec.py");
    if (unsupported) {
      EXPECT_TRUE(d.unsupported()) << d.what();
    }
  }
}

// ---- the workloads

struct Workload {
  const char* file;
  const char* type;
};

TEST(frontend, AllWorkloadsParse) {
  const Workload kWorkloads[] = {
      {"m1_rmsnorm_matmul", "f32[1024, 1024]"},    {"m2_matmul_bias_gelu", "f32[1024, 4096]"},
      {"m3_gated_mlp", "f32[256, 1024]"},          {"m4_lora", "f32[1024, 1024]"},
      {"m5_attention", "f32[16, 1024, 64]"},       {"m6_causal_attention", "f32[16, 1024, 64]"},
      {"m7_gqa_decode", "f32[32, 128]"},           {"m8_mla_decode", "f32[2, 128, 512]"},
      {"m9_qknorm_attention", "f32[16, 1024, 64]"}, {"m10_add_layernorm", "f32[4096, 1024]"},
      {"m11_softmax_matmul", "f32[1024, 1024]"},   {"s1_matmul", "f32[1024, 1024]"},
      {"s2_softmax", "f32[4096, 1024]"},           {"s3_layernorm", "f32[4096, 1024]"},
      {"s4_rmsnorm", "f32[4096, 1024]"},           {"s5_gelu", "f32[4096, 2048]"},
      {"s6_silu", "f32[4096, 2048]"},              {"s7_rowsum", "f32[8192]"},
      {"s8_transpose", "f32[2048, 2048]"},         {"s9_bmm", "f32[32, 256, 256]"},
  };
  for (const Workload& w : kWorkloads) {
    std::string path = std::string(AXON_SOURCE_DIR) + "/bench/workloads/" + w.file + ".py";
    SCOPED_TRACE(path);
    try {
      Spec s = load_spec(path, {});
      EXPECT_EQ(s.graph.entry, w.file);
      ASSERT_EQ(s.graph.outputs.size(), 1u);
      EXPECT_EQ(out_type(s), w.type);
      EXPECT_FALSE(s.graph.params.empty());
      EXPECT_FALSE(s.source.empty());
    } catch (const Diagnostic& d) {
      ADD_FAILURE() << d.what();
    }
  }
}

TEST(frontend, GqaDecodeShapes) {
  Spec s = load_spec(std::string(AXON_SOURCE_DIR) + "/bench/workloads/m7_gqa_decode.py", {});
  ASSERT_EQ(s.graph.params.size(), 3u);
  EXPECT_EQ(s.graph.params[0].name, "q");
  EXPECT_EQ(ir::type_str(s.graph.params[1].type), "f32[8, 4096, 128]");
  // q.reshape(Hkv, Hq // Hkv, D) and two batched matmuls.
  EXPECT_EQ(count_ops(s.graph, Op::Einsum), 2);
  bool grouped = false;
  for (const ir::Node& n : s.graph.nodes()) grouped |= ir::type_str(n.type) == "f32[8, 4, 128]";
  EXPECT_TRUE(grouped);
}

// ---- numpy semantics

TEST(frontend, BroadcastShapes) {
  Spec s = parse("def f(x: \"f32[4, 1, 3]\", y: \"f32[5, 1]\"):\n    return x + y\n");
  EXPECT_EQ(out_type(s), "f32[4, 5, 3]");
  EXPECT_EQ(count_ops(s.graph, Op::Broadcast), 2);
}

TEST(frontend, NegativeAxesAndKeepdims) {
  Spec s = parse("def f(x: \"f32[2, 3, 4]\"):\n    return np.sum(x, axis=-2), x.max(axis=(0, -1), keepdims=True)\n");
  EXPECT_EQ(out_type(s, 0), "f32[2, 4]");
  EXPECT_EQ(out_type(s, 1), "f32[1, 3, 1]");
  const ir::Node* sum = find_op(s.graph, Op::ReduceSum);
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->attrs.ints, (std::vector<int64_t>{1}));
  const ir::Node* mx = find_op(s.graph, Op::ReduceMax);
  ASSERT_NE(mx, nullptr);
  EXPECT_EQ(mx->attrs.ints, (std::vector<int64_t>{0, 2}));
}

TEST(frontend, MatmulBroadcastsBatchDims) {
  Spec s = parse("def f(a: \"f32[2, 1, 4, 5]\", b: \"f32[3, 5, 6]\"):\n    return a @ b\n");
  EXPECT_EQ(out_type(s), "f32[2, 3, 4, 6]");
  const ir::Node* e = find_op(s.graph, Op::Einsum);
  ASSERT_NE(e, nullptr);
  // a's unit batch axis is reshaped away; its label lives on b only.
  EXPECT_EQ(e->attrs.text, "amk,bkn->abmn");
  EXPECT_EQ(count_ops(s.graph, Op::Broadcast), 0);
}

TEST(frontend, OneDimensionalMatmul) {
  Spec s = parse("def f(v: \"f32[5]\", m: \"f32[5, 6]\", w: \"f32[6]\"):\n    return v @ m, m @ w, w @ w\n");
  EXPECT_EQ(out_type(s, 0), "f32[6]");
  EXPECT_EQ(out_type(s, 1), "f32[5]");
  EXPECT_EQ(out_type(s, 2), "f32[]");
}

TEST(frontend, ConstantFolding) {
  Spec s = parse(
      "def f(x: \"f32[4]\"):\n"
      "    scale = (0.1 * np.log(40.0) + 1.0) ** 2 / np.sqrt(192.0)\n"
      "    n = (7 // 2) % 3 + len(x.shape) * x.shape[-1]\n"
      "    return x * scale, x + n\n");
  // The IR keeps the exact value; the kernel rounds it (and its budget pays).
  double want = std::pow(0.1 * std::log(40.0) + 1.0, 2) / std::sqrt(192.0);
  std::vector<double> constants;
  for (const ir::Node& n : s.graph.nodes())
    if (n.op == Op::Constant) constants.push_back(n.attrs.value);
  ASSERT_EQ(constants.size(), 2u);
  EXPECT_EQ(constants[0], want);
  EXPECT_EQ(constants[1], 4.0);  // (7 // 2) % 3 + 1 * 4
  EXPECT_EQ(out_type(s, 0), "f32[4]");
}

TEST(frontend, ExplicitDtypesRoundConstants) {
  Spec s = parse("def f(x: \"f32[4]\"):\n    return x * 0.1, x * np.float32(0.1), x + np.full((4,), 0.1, dtype=np.float32)\n");
  std::vector<double> constants;
  for (const ir::Node& n : s.graph.nodes())
    if (n.op == Op::Constant) constants.push_back(n.attrs.value);
  ASSERT_EQ(constants.size(), 2u);  // the two explicitly typed ones are one node
  EXPECT_EQ(constants[0], 0.1);
  EXPECT_EQ(constants[1], static_cast<double>(0.1f));
}

TEST(frontend, Nep50Promotion) {
  Spec s = parse(
      "def f(x: \"f32[4]\", i: \"i32[4]\", b: \"bool[4]\", h: \"f16[4]\"):\n"
      "    return x * 2.5, i / i, x + i, b + 1, i + 1.5, h * 3, i + 1, x * np.float64(2.0), b & True\n");
  const char* want[] = {"f32[4]", "f64[4]", "f64[4]", "i64[4]", "f64[4]", "f16[4]", "i32[4]", "f64[4]", "bool[4]"};
  ASSERT_EQ(s.graph.outputs.size(), 9u);
  for (size_t k = 0; k < 9; ++k) EXPECT_EQ(out_type(s, k), want[k]) << "output " << k;
}

TEST(frontend, SlicingWithNegativeStep) {
  Spec s = parse("def f(x: \"f32[4, 5]\"):\n    return x[::-1, 1:4:2], x[-1], x[None, ..., 0]\n");
  EXPECT_EQ(out_type(s, 0), "f32[4, 2]");
  EXPECT_EQ(out_type(s, 1), "f32[5]");
  EXPECT_EQ(out_type(s, 2), "f32[1, 4]");
  const ir::Node* sl = find_op(s.graph, Op::Slice);
  ASSERT_NE(sl, nullptr);
  EXPECT_EQ(sl->attrs.ints, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(sl->attrs.ints2, (std::vector<int64_t>{-1, 2}));
}

TEST(frontend, MultipleOutputsAndHelpers) {
  Spec s = parse(
      "def norm(x, axis=-1, *, eps=1e-6):\n"
      "    return x / np.sqrt(np.mean(x * x, axis=axis, keepdims=True) + eps)\n"
      "def f(x: \"f32[8, 16]\"):\n"
      "    a, b = norm(x), norm(x, axis=0, eps=1e-5)\n"
      "    return a, b.T\n");
  ASSERT_EQ(s.graph.outputs.size(), 2u);
  EXPECT_EQ(out_type(s, 0), "f32[8, 16]");
  EXPECT_EQ(out_type(s, 1), "f32[16, 8]");
}

TEST(frontend, DimBindingsAndEntry) {
  SpecOptions opts;
  opts.dims["M"] = 8;
  opts.entry = "g";
  Spec s = parse("def g(x: \"f32[M, 64]\"):\n    return x.reshape(-1, 16)\ndef h(y: \"f32[2]\"):\n    return y\n", opts);
  EXPECT_EQ(s.graph.entry, "g");
  EXPECT_EQ(ir::type_str(s.graph.params[0].type), "f32[8, 64]");
  EXPECT_EQ(out_type(s), "f32[32, 16]");
}

TEST(frontend, PowersStayExact) {
  Spec s = parse("def f(x: \"f32[4]\"):\n    return -x**2, x ** 3, x ** 0.5, x ** 1.7\n");
  EXPECT_EQ(count_ops(s.graph, Op::Pow), 1);  // only x ** 1.7
  EXPECT_EQ(s.graph[s.graph.outputs[0]].op, Op::Neg);
  EXPECT_EQ(s.graph[s.graph[s.graph.outputs[0]].args[0]].op, Op::Mul);
  EXPECT_EQ(s.graph[s.graph.outputs[2]].op, Op::Sqrt);
}

TEST(frontend, MasksWhereAndCreation) {
  Spec s = parse(
      "def f(s: \"f32[3, 4, 4]\", c: \"f32[4]\"):\n"
      "    mask = np.tril(np.ones((4, 4), dtype=bool))\n"
      "    m = np.where(mask, s, -np.inf)\n"
      "    e = np.eye(4, dtype=np.float32) + np.arange(4) * np.zeros((4, 4), \"float32\")\n"
      "    return m, np.where(c, 1.0, 0), e\n");
  EXPECT_EQ(out_type(s, 0), "f32[3, 4, 4]");
  EXPECT_EQ(out_type(s, 1), "f64[4]");  // a non-bool condition is tested against zero
  EXPECT_EQ(out_type(s, 2), "f64[4, 4]");  // arange is i64, i64 * f32 -> f64
  EXPECT_GE(count_ops(s.graph, Op::Select), 2);
  EXPECT_GE(count_ops(s.graph, Op::Iota), 2);
}

TEST(frontend, EinsumChainsAndLayout) {
  Spec s = parse(
      "def f(a: \"f32[2, 3]\", b: \"f32[3, 4]\", c: \"f32[4, 5]\", x: \"f32[2, 3, 4]\"):\n"
      "    y = np.einsum(\"ij,jk,kl->il\", a, b, c)\n"
      "    z = np.concatenate([x, x], axis=-1)\n"
      "    w = np.stack(np.split(x, 2, axis=2), axis=0)\n"
      "    return y, z, w, np.moveaxis(x, 0, -1), np.expand_dims(a, (0, 3)).squeeze()\n");
  EXPECT_EQ(out_type(s, 0), "f32[2, 5]");
  EXPECT_EQ(count_ops(s.graph, Op::Einsum), 2);
  EXPECT_EQ(out_type(s, 1), "f32[2, 3, 8]");
  EXPECT_EQ(out_type(s, 2), "f32[2, 2, 3, 2]");
  EXPECT_EQ(out_type(s, 3), "f32[3, 4, 2]");
  EXPECT_EQ(out_type(s, 4), "f32[2, 3]");
}

TEST(frontend, SourceLocationsAreNoted) {
  Spec s = parse("def f(x: \"f32[4]\"):\n    return np.exp(x)\n");
  for (const auto& [id, loc] : s.graph.locs) {
    if (s.graph[id].op != Op::Exp) continue;
    EXPECT_EQ(loc.line, 3);
    EXPECT_EQ(loc.col, 15);  // the 'exp' of np.exp
    return;
  }
  ADD_FAILURE() << "no location for the exp node";
}

// ---- errors

TEST(frontend, SyntaxErrorSaysWhatWasExpected) {
  expect_error("def f(x: \"f32[4]\"):\n    return (x + 1\n", 3, 12, "was never closed");
  expect_error("def f(x: \"f32[4]\")\n    return x\n", 2, 19, "expected ':'");
  expect_error("def f(x: \"f32[4]\"):\nreturn x\n", 3, 1, "expected an indented block");
  expect_error("def f(x: \"f32[4]\"):\n    return x +\n", 3, 15, "expected an expression");
}

TEST(frontend, UnknownNames) {
  expect_error("def f(x: \"f32[4]\"):\n    return np.foo(x)\n", 3, 15, "np.foo is not a supported numpy function");
  expect_error("def f(x: \"f32[4]\"):\n    return y + x\n", 3, 12, "name 'y' is not defined");
  expect_error("def f(x: \"f32[4]\"):\n    return x.bar\n", 3, 14, "has no attribute 'bar'");
}

TEST(frontend, BroadcastErrorNamesBothTypes) {
  expect_error("def f(x: \"f32[1024, 4096]\", y: \"f32[1024]\"):\n    return x * 2 + y\n", 3, 18,
               "shapes f32[1024, 4096] and f32[1024] do not broadcast");
}

TEST(frontend, MatmulMismatch) {
  expect_error("def f(a: \"f32[8, 64]\", b: \"f32[128, 4]\"):\n    return a @ b\n", 3, 14,
               "matmul: contraction dims 64 and 128 do not match");
}

TEST(frontend, AxisOutOfBounds) {
  expect_error("def f(x: \"f32[4, 4]\"):\n    return np.sum(x, axis=2)\n", 3, 27,
               "axis 2 is out of bounds for array of dimension 2");
}

TEST(frontend, ReshapeSizeMismatch) {
  expect_error("def f(x: \"f32[3, 4]\"):\n    return x.reshape(5, 2)\n", 3, 14,
               "cannot reshape array of size 12 into shape (5, 2)");
}

TEST(frontend, AnnotationErrors) {
  expect_error("def f(x: \"f32[M, 4]\"):\n    return x\n", 2, 15, "dimension M is not bound; pass -D M=<size>");
  expect_error("def f(x: \"f33[4]\"):\n    return x\n", 2, 11, "unknown dtype 'f33'");
  SpecOptions entry;
  entry.entry = "f";
  expect_error("def f(x):\n    return x\n", 2, 7, "needs a type annotation", entry);
}

TEST(frontend, EntryErrors) {
  SpecOptions opts;
  opts.entry = "nope";
  try {
    parse("def f(x: \"f32[4]\"):\n    return x\n", opts);
    ADD_FAILURE() << "expected an error";
  } catch (const Diagnostic& d) {
    EXPECT_EQ(d.loc().file, "spec.py");
    EXPECT_EQ(d.loc().line, 0);
    EXPECT_NE(d.message().find("entry function 'nope' is not defined"), std::string::npos) << d.what();
  }
  try {
    load_spec("/nonexistent/spec.py", {});
    ADD_FAILURE() << "expected an error";
  } catch (const Diagnostic& d) {
    EXPECT_EQ(d.loc().file, "/nonexistent/spec.py");
    EXPECT_EQ(d.loc().line, 0);
  }
}

TEST(frontend, HelperCallErrors) {
  expect_error("def g(x, y):\n    return x\ndef f(x: \"f32[4]\"):\n    return g(x)\n", 5, 12,
               "g() missing 1 required positional argument: 'y'");
  expect_error("def g(x):\n    return g(x)\ndef f(x: \"f32[4]\"):\n    return g(x)\n", 3, 12, "recursive call to 'g'",
               {}, true);
  expect_error("def g(x):\n    return x\ndef f(x: \"f32[4]\"):\n    return g(x, k=1)\n", 5, 17,
               "unexpected keyword argument 'k'");
}

TEST(frontend, DtypeErrors) {
  expect_error("def f(x: \"f32[4]\"):\n    return (x > 0) & x\n", 3, 20, "operator & needs bool or integer operands");
  expect_error("def f(x: \"f32[4]\", y: \"f32[4]\"):\n    return x ** y\n", 3, 14, "exponent must be a constant", {},
               true);
  expect_error("def f(x: \"bool[4]\"):\n    return -x\n", 3, 12, "boolean negative");
}

TEST(frontend, UnsupportedStatements) {
  expect_error("def f(x: \"f32[4]\"):\n    for i in range(3):\n        x = x + 1\n    return x\n", 3, 5,
               "loops are not supported", {}, true);
  expect_error("import math\ndef f(x: \"f32[4]\"):\n    return x\n", 2, 8, "import of module 'math'", {}, true);
  expect_error("def f(x: \"f32[4]\"):\n    x += 1\n    return x\n", 3, 7, "in place", {}, true);
  expect_error("def f(x: \"f32[4]\"):\n    return x if x else x\n", 3, 14, "truth value of an array is ambiguous");
}

TEST(frontend, IndexErrors) {
  expect_error("def f(x: \"f32[3, 4]\"):\n    return x[3]\n", 3, 14, "index 3 is out of bounds for axis 0 with size 3");
  expect_error("def f(x: \"f32[3, 4]\"):\n    return x[0, 1, 2]\n", 3, 13, "too many indices for array");
}

TEST(frontend, PythonSurface) {
  Spec s = parse(
      "from numpy import exp as e_, float32\n"
      "EPS = 1e-6\n"
      "def helper(x, axis=None, scale=2.0):\n"
      "    \"\"\"Docstring.\"\"\"\n"
      "    ax = -1 if axis is None else axis\n"
      "    assert x.ndim >= 1, \"needs an array\"\n"
      "    return np.sum(x * scale, axis=ax, keepdims=True)\n"
      "def f(x: \"f32[4, 6]\", s: \"f32[]\", t: \"f16\", k=3) -> \"f32[4, 3, 2]\":\n"
      "    z = x.reshape(*x.shape[:-1], 3, -1)  # star-args\n"
      "    w = e_(z) * float32(0.5) + s + np.e + float('-inf') * EPS\n"
      "    return w / helper(z, axis=-2) + t.astype(np.float32) * k\n");
  EXPECT_EQ(out_type(s), "f32[4, 3, 2]");
  ASSERT_EQ(s.graph.params.size(), 3u);
  EXPECT_EQ(ir::type_str(s.graph.params[1].type), "f32[]");
  EXPECT_EQ(ir::type_str(s.graph.params[2].type), "f16[]");
}

TEST(frontend, ErrorsInsideHelpersNameTheCallChain) {
  expect_error(
      "def inner(a, b):\n    return a + b\ndef outer(a, b):\n    return inner(a, b) * 2\n"
      "def f(x: \"f32[4]\", y: \"f32[5]\"):\n    return outer(x, y)\n",
      3, 14, "do not broadcast (in inner, called at 5:12; outer, called at 7:12)");
  expect_error("def f(x: \"f32[4]\") -> \"f32[5]\":\n    return x\n", 2, 23, "returns f32[4] but its annotation says f32[5]");
  expect_error("def f(x: \"f32[4]\"):\n    assert x.shape[0] == 5, \"rows\"\n    return x\n", 3, 12,
               "assertion failed: rows");
  expect_error("def f(x: \"f32[4]\"):\n    return np.prod(x)\n", 3, 15, "np.prod is not supported", {}, true);
}

TEST(frontend, MainGuardIsSkipped) {
  Spec s = parse(
      "def f(x: \"f32[4]\"):\n    return np.abs(x)\n"
      "if __name__ == \"__main__\":\n    for i in range(3):\n        print(f(np.ones(4)))\n");
  EXPECT_EQ(out_type(s), "f32[4]");
}

}  // namespace
}  // namespace axon::frontend
