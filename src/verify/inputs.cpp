#include "verify/inputs.h"

#include <algorithm>
#include <cstring>

#include "ir/real.h"
#include "verify/kernel_io.h"
#include "verify/random_values.h"

namespace axon::verify {

namespace {

constexpr const char* kNames[] = {"normal", "shifted_mean", "wide_range", "large", "ties", "tiny"};

// Elements drawn at a time: the block's values stay in the first-level
// cache between the generator and the rounding.
constexpr int64_t kChunk = 1024;

// Values x of `dist` (before the draw's scale and offset) of elements
// [first, first + n) of stream `key`; `first` is even.
void distribution_values(Distribution dist, uint64_t key, int64_t first, int64_t n, double* out) {
  switch (dist) {
    case Distribution::WideRange: wide_range_values(key, first, n, out); return;
    case Distribution::Ties:
      for (int64_t i = 0; i < n; ++i)
        out[i] = static_cast<double>(static_cast<int64_t>(stream_word(key, static_cast<uint64_t>(first + i) + 1) % 5) - 2);
      return;
    default: break;
  }
  normal_values(key, first / 2, (n + 1) / 2, out);  // n + 1 values when n is odd: `out` holds a whole chunk
  double mul = 1, add = 0;
  if (dist == Distribution::ShiftedMean) add = 3;
  if (dist == Distribution::Large) mul = 100;
  if (dist == Distribution::Tiny) mul = 1e-30;
  if (mul != 1 || add != 0)
    for (int64_t i = 0; i < n; ++i) out[i] = out[i] * mul + add;
}

// A floating-point parameter: each chunk drawn, scaled and shifted, rounded
// to the dtype and stored both as float64 and in the kernel's representation.
void draw_float(const ir::Type& t, uint64_t key, const Draw& d, double* values, uint8_t* bytes) {
  const int64_t n = t.numel();
  double chunk[kChunk];
  for (int64_t first = 0; first < n; first += kChunk) {
    const int64_t m = std::min(kChunk, n - first);
    distribution_values(d.dist, key, first, m, chunk);
    if (d.scale != 1 || d.offset != 0)
      for (int64_t i = 0; i < m; ++i) chunk[i] = chunk[i] * d.scale + d.offset;
    double* v = values + first;
    switch (t.dtype) {
      case ir::DType::F32:
        for (int64_t i = 0; i < m; ++i) {
          const float f = static_cast<float>(chunk[i]);
          v[i] = f;
          if (bytes) std::memcpy(bytes + 4 * (first + i), &f, 4);
        }
        break;
      case ir::DType::F64:
        std::copy(chunk, chunk + m, v);
        if (bytes) std::memcpy(bytes + 8 * first, chunk, static_cast<size_t>(8 * m));
        break;
      default:  // f16, bf16: the bytes from the rounded values below
        for (int64_t i = 0; i < m; ++i) v[i] = ir::cast_to(t.dtype, ir::Real{chunk[i]}).v;
        break;
    }
  }
}

}  // namespace

const char* distribution_name(Distribution d) { return kNames[static_cast<int>(d)]; }
bool parse_distribution(const std::string& name, Distribution* out) {
  for (int i = 0; i < 6; ++i)
    if (name == kNames[i]) {
      *out = static_cast<Distribution>(i);
      return true;
    }
  return false;
}

std::vector<ir::Tensor> random_inputs(const ir::Graph& g, uint64_t seed, Distribution dist) {
  return random_inputs(g, seed, Draw{dist});
}

std::vector<ir::Tensor> random_inputs(const ir::Graph& g, uint64_t seed, const Draw& draw,
                                      std::vector<std::vector<uint8_t>>* buffers) {
  std::vector<ir::Tensor> out;
  if (buffers) buffers->clear();
  for (size_t p = 0; p < g.params.size(); ++p) {
    const ir::Type& t = g.params[p].type;
    // Each parameter's stream is keyed by a hash of (seed, p), so that
    // parameters of the same shape are not shifted copies of each other.
    const uint64_t key = stream_word(seed * 0x100000001b3ull + p + 1, 1);
    const int64_t n = t.numel();
    ir::Tensor x{t, std::vector<double>(static_cast<size_t>(n))};
    std::vector<uint8_t> bytes;
    const bool direct = t.dtype == ir::DType::F32 || t.dtype == ir::DType::F64;
    if (ir::is_float(t.dtype)) {
      if (buffers && direct) bytes.resize(static_cast<size_t>(n * ir::dtype_bytes(t.dtype)));
      draw_float(t, key, draw, x.data.data(), bytes.empty() ? nullptr : bytes.data());
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t w = stream_word(key, static_cast<uint64_t>(i) + 1);
        x.data[static_cast<size_t>(i)] = t.dtype == ir::DType::Bool ? static_cast<double>(w & 1)
                                                                     : static_cast<double>(static_cast<int64_t>(w % 17) - 8);
      }
    }
    if (buffers) buffers->push_back(direct ? std::move(bytes) : to_buffer(x, t.dtype));
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace axon::verify
