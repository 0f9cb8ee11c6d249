// Moving tensors in and out of kernel buffers: the element types of the C ABI
// (float, double, int32_t, int64_t, bool, and uint16_t bit patterns for
// f16/bf16), dense row-major.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/type.h"
#include "ir/tensor.h"

namespace axon::verify {

/// Bytes holding `t` in `dtype`'s C representation (values rounded as a cast would).
std::vector<uint8_t> to_buffer(const ir::Tensor& t, ir::DType dtype);
/// The values of a buffer of `n` elements of `dtype`, as float64.
std::vector<double> from_buffer(const uint8_t* data, int64_t n, ir::DType dtype);
/// The same into `out` (resized to n), so that a caller converting many
/// buffers reuses one allocation.
void from_buffer(const uint8_t* data, int64_t n, ir::DType dtype, std::vector<double>& out);

}  // namespace axon::verify
