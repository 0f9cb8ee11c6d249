// The C ABI every generated CPU kernel shares (README.md, "Kernels"):
//
//   extern "C" void <entry>(const float* X, const float* g, ..., float* out0, ...);
//
// inputs in the spec's parameter order, named after the parameters (made
// into C identifiers that cannot clash with the names kernels use inside),
// then outputs in return order as out0, out1, ...; dense row-major,
// caller-allocated, element types from ir::dtype_c_type; a 0-d value is a
// pointer to one element.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace axon::codegen {

struct KernelAbi {
  std::string entry;                      // C symbol
  std::vector<std::string> param_names;   // one per g.params
  std::vector<std::string> output_names;  // one per g.outputs: out0, out1, ...
  /// kernel.h: include guard, <stdint.h>/<stdbool.h>, a comment with every
  /// buffer's shape, and the extern "C" declaration.
  std::string header;
  /// The definition's first line without the brace, with __restrict pointers:
  /// `extern "C" void f(const float* __restrict X, float* __restrict out0)`.
  std::string definition;
  /// What is between the definition's parentheses.
  std::string parameters;
};

KernelAbi make_kernel_abi(const ir::Graph& g);
/// The same for a kernel that is no graph's (a stage of a staged kernel):
/// `entry`, its inputs' names and types, its outputs' types.
KernelAbi make_kernel_abi(const std::string& entry, const std::vector<ir::ParamInfo>& params,
                          const std::vector<ir::Type>& outputs);

/// `name` made into a C identifier that is not a keyword and not one of the
/// names generated code uses for itself (out0, t5, i0, r0, s3, v4, acc, x, axon_*, ...).
std::string c_identifier(const std::string& name);

/// `text` made safe for a // comment (no line breaks, no trailing backslash).
std::string comment_text(const std::string& text);

}  // namespace axon::codegen
