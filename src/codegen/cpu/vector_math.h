// Vector math for generated CPU kernels: exp, log, tanh, sigmoid, sqrt,
// rsqrt and erf as C++ source text that emit_cpu pastes into a kernel.
//
// Every function is written once, as a template over an "ISA traits" struct
// (AVX-512, AVX2+FMA, scalar float), so a vector loop and its scalar tail
// run the same algorithm and agree bit for bit up to the last rounding of
// each instruction. Accuracy is measured exhaustively (tools/
// vecmath_exhaustive.cpp, every float32 input) and documented in
// docs/vector_math.md; vector_math_accuracy() returns the same bounds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel_source.h"

namespace axon::codegen {

/// C++ source text to paste into a generated kernel after
/// `#include <immintrin.h>`, `<cmath>` and `<cstdint>`. It defines static
/// inline functions
///   axon_vexp, axon_vlog, axon_vtanh, axon_vsigmoid, axon_vsqrt, axon_vrsqrt, axon_verf
/// overloaded for `float` always, for `__m256` when vector_bits >= 256
/// (AVX2 and FMA instructions only) and for `__m512` when vector_bits == 512
/// (AVX-512F), and for tuples axon_t<__m256, N> / axon_t<__m512, N> of N
/// vectors, run as one interleaved instruction stream with the bits of one
/// vector at a time (docs/loop_ir.md). Semantics are the IR ops' (ops.def): sigmoid(x) = 1/(1+exp(-x)),
/// rsqrt(x) = 1/sqrt(x); special values as libm (overflow to inf, gradual
/// underflow to subnormals and 0, NaN in → NaN out, log(±0) = -inf,
/// log(x<0) = sqrt(x<0) = NaN, tanh, sigmoid and erf saturate without NaN).
/// Requires: vector_bits is 0, 256 or 512 (AXON_CHECK).
std::string vector_math_source(int vector_bits);

struct VectorMathAccuracy {
  const char* name;    // "exp", ..., as the axon_v<name> function
  double max_ulp;      // bound on |result - exact| in ulps of the exact value, every ISA
  const char* domain;  // the inputs the bound covers
};

/// The measured maximum errors, as documented in docs/vector_math.md (each
/// bound is the exhaustive maximum over all ISAs, rounded up slightly).
const std::vector<VectorMathAccuracy>& vector_math_accuracy();

// ---- For the accuracy sweeps (tests/unit/vector_math_test.cpp,
// tools/vecmath_exhaustive.cpp) ----

/// The seven function names, in the order of vector_math_accuracy().
const std::vector<std::string>& vector_math_functions();

/// A kernel with entry
///   extern "C" void axon_vm_apply(const int32_t* fn, const float* in, float* out, const int64_t* n)
/// that writes out[i] = f(in[i]) for the function vector_math_functions()[*fn],
/// using the __m512, __m256 or float overloads (vector_bits 512, 256, 0) with
/// the scalar version for the tail. Compile it with vector_math_flags.
KernelSource vector_math_sweep_kernel(int vector_bits);

/// Compiler flags for a sweep kernel: -O2, the ISA of vector_bits and no
/// wider (512: -mavx512f -mavx2 -mfma; 256: -mavx2 -mfma; 0: -mfma),
/// -fPIC -shared.
std::vector<std::string> vector_math_flags(int vector_bits);

/// The exact value of function `fn` (index into vector_math_functions()) at
/// x, from the float64 libm (sigmoid as 1/(1+exp(-x)), rsqrt as 1/sqrt(x)).
double vector_math_reference(int fn, float x);

/// |got - exact| in ulps of exact (ulp of the float32 binade of |exact|,
/// 2^-149 below 2^-126). 0 when both are NaN or both the same infinity;
/// +inf when only one of them is NaN or infinite (after rounding exact to
/// float32).
double ulp_error(float got, double exact);

}  // namespace axon::codegen
