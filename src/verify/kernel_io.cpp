#include "verify/kernel_io.h"

#include <cstring>

#include "ir/real.h"

namespace axon::verify {

namespace {
uint16_t half_bits(double x) {
  _Float16 h = static_cast<_Float16>(x);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
uint16_t bf16_bits(double x) {
  float f = static_cast<float>(ir::round_to_bf16(x));
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return static_cast<uint16_t>(b >> 16);
}
double from_half(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return static_cast<double>(h);
}
double from_bf16(uint16_t b) {
  uint32_t w = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}
template <class T>
void store(std::vector<uint8_t>& out, const std::vector<double>& v, T (*conv)(double)) {
  out.resize(v.size() * sizeof(T));
  for (size_t i = 0; i < v.size(); ++i) {
    T x = conv(v[i]);
    std::memcpy(out.data() + i * sizeof(T), &x, sizeof(T));
  }
}
template <class T>
void load(std::vector<double>& out, const uint8_t* data, double (*conv)(T)) {
  for (size_t i = 0; i < out.size(); ++i) {
    T x;
    std::memcpy(&x, data + i * sizeof(T), sizeof(T));
    out[i] = conv(x);
  }
}
}  // namespace

std::vector<uint8_t> to_buffer(const ir::Tensor& t, ir::DType dtype) {
  std::vector<uint8_t> out;
  switch (dtype) {
    case ir::DType::Bool: store<uint8_t>(out, t.data, [](double x) -> uint8_t { return x != 0; }); break;
    case ir::DType::I32: store<int32_t>(out, t.data, [](double x) { return static_cast<int32_t>(x); }); break;
    case ir::DType::I64: store<int64_t>(out, t.data, [](double x) { return static_cast<int64_t>(x); }); break;
    case ir::DType::F16: store<uint16_t>(out, t.data, half_bits); break;
    case ir::DType::BF16: store<uint16_t>(out, t.data, bf16_bits); break;
    case ir::DType::F32: store<float>(out, t.data, [](double x) { return static_cast<float>(x); }); break;
    case ir::DType::F64: store<double>(out, t.data, [](double x) { return x; }); break;
  }
  return out;
}

std::vector<double> from_buffer(const uint8_t* data, int64_t n, ir::DType dtype) {
  std::vector<double> out;
  from_buffer(data, n, dtype, out);
  return out;
}

void from_buffer(const uint8_t* data, int64_t n, ir::DType dtype, std::vector<double>& out) {
  out.resize(static_cast<size_t>(n));
  switch (dtype) {
    case ir::DType::Bool: load<uint8_t>(out, data, [](uint8_t x) { return x ? 1.0 : 0.0; }); break;
    case ir::DType::I32: load<int32_t>(out, data, [](int32_t x) { return static_cast<double>(x); }); break;
    case ir::DType::I64: load<int64_t>(out, data, [](int64_t x) { return static_cast<double>(x); }); break;
    case ir::DType::F16: load<uint16_t>(out, data, from_half); break;
    case ir::DType::BF16: load<uint16_t>(out, data, from_bf16); break;
    case ir::DType::F32: load<float>(out, data, [](float x) { return static_cast<double>(x); }); break;
    case ir::DType::F64: load<double>(out, data, [](double x) { return x; }); break;
  }
}

}  // namespace axon::verify
