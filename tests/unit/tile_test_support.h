// Shared by the tile IR's tests: the verifier's problems as one text, so
// that EXPECT_EQ(problems_text(verify(k)), "") prints them all on failure;
// random inputs for a kernel's buffers; a GEMM schedule in one line; the
// float64 product a GEMM shape describes, element by element, and a check of
// a GEMM's output C against the float64 value wanted at each element.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "tile/kernel.h"
#include "tile/lower_gemm.h"

namespace axon::test {

// A scalar f32 node of op `o`, for building epilogue values by hand.
inline ir::Node f32_op(ir::Op o) {
  ir::Node n{};
  n.op = o;
  n.type = ir::Type{ir::DType::F32, {}};
  return n;
}

inline std::string problems_text(const std::vector<std::string>& problems) {
  std::string s;
  for (const std::string& p : problems) s += p + "\n";
  return s;
}

/// One tensor per parameter of `g`, uniform in [-2, 2) rounded to float32,
/// from `seed`: a graph's inputs for the interpreter and the tile programs.
inline std::vector<ir::Tensor> graph_inputs(const ir::Graph& g, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  std::vector<ir::Tensor> in;
  for (const ir::ParamInfo& p : g.params) {
    ir::Tensor t{p.type, std::vector<double>(static_cast<size_t>(p.type.numel()))};
    for (double& v : t.data) v = static_cast<float>(u(rng));
    in.push_back(std::move(t));
  }
  return in;
}

/// One f32 tensor per id in `buffers` (of k.buffers), uniform in [-1, 1)
/// from `seed`, in that order: the interpreter's inputs.
inline std::vector<ir::Tensor> random_inputs(const tile::Kernel& k, const std::vector<int>& buffers, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<ir::Tensor> in(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const tile::Buffer& b = k.buffers[static_cast<size_t>(buffers[i])];
    in[i].type = ir::Type{ir::DType::F32, b.shape};
    in[i].data.resize(static_cast<size_t>(b.numel()));
    for (double& x : in[i].data) x = dist(rng);
  }
  return in;
}

/// The GEMM's thread placements the blocking tests cover: one thread; two
/// on ranges of rows (split_n 0); two on whole column blocks (split_n 1).
inline constexpr std::pair<int, int> kThreadSplits[] = {{1, 0}, {2, 0}, {2, 1}};

inline tile::GemmSchedule gemm_schedule(int mr, int nr, int64_t kc, int64_t mc, int64_t nc, int threads, bool pack_a,
                                        bool pack_b, int epilogue = 1) {
  tile::GemmSchedule s;
  s.mr = mr, s.nr = nr, s.kc = kc, s.mc = mc, s.nc = nc, s.threads = threads, s.pack_a = pack_a, s.pack_b = pack_b;
  s.epilogue = epilogue;
  return s;
}

/// C[b][m][n] of A . B in float64, reading A and B through g's strides.
inline double gemm_product(const tile::GemmShape& g, const ir::Tensor& A, const ir::Tensor& B, int64_t b, int64_t m,
                           int64_t n) {
  double c = 0;
  for (int64_t l = 0; l < g.K; ++l)
    c += A.data[static_cast<size_t>(b * g.a_batch + m * g.a_m + l * g.a_k)] *
         B.data[static_cast<size_t>(b * g.b_batch + l * g.b_k + n * g.b_n)];
  return c;
}

/// Every C[b][m][n] (through g's strides) within 1e-12 relative of
/// want(b, m, n); the first three misses are reported, tagged with `what`.
inline void expect_gemm_output(const tile::GemmShape& g, const ir::Tensor& C,
                               const std::function<double(int64_t, int64_t, int64_t)>& want,
                               const std::string& what) {
  int bad = 0;
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t m = 0; m < g.M; ++m)
      for (int64_t n = 0; n < g.N; ++n) {
        const double w = want(b, m, n);
        const double got = C.data[static_cast<size_t>(b * g.c_batch + m * g.c_m + n * g.c_n)];
        if (!(std::fabs(got - w) <= 1e-12 * (1 + std::fabs(w))) && bad++ < 3)
          ADD_FAILURE() << what << ": C[" << b << "][" << m << "][" << n << "] = " << got << ", want " << w;
      }
  EXPECT_EQ(bad, 0) << what;
}

}  // namespace axon::test
