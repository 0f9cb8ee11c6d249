// f16 and bf16 in generated kernels: buffers hold the uint16_t bits, values
// are computed in float, and every conversion rounds to nearest, ties to even.
// The helpers are emitted as text into each kernel that needs them (kernels
// do not depend on axon); round_to_f16/round_to_bf16 give the same rounding
// here, for literals folded at generation time.
#pragma once

namespace axon::codegen {

/// The C++ source of the axon_* conversion helpers, for kernel.cpp.
const char* float16_helpers_source();

/// `x` rounded once to the nearest f16 / bf16 value (ties to even).
double round_to_f16(double x);
double round_to_bf16(double x);

}  // namespace axon::codegen
