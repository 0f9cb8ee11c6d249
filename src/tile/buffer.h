// Buffer: a named, typed, dense row-major array of the tile IR, and where it
// lives.
//
///   Input     a kernel parameter (read only), ABI position `param`
///   Output    a kernel result, ABI position `output`
///   Memory    a dense temporary in main memory, between Alloc and Free
///   Scratch   thread-local storage (stack or aligned heap) of the enclosing
///             scope: each thread of a parallel loop has its own
///   Register  a few values the compiler keeps in registers (accumulators);
///             held in the dtype's compute type (float for f16 and bf16)
///   Shared    reserved for a GPU block's shared memory; no CPU printer takes it
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "ir/type.h"

namespace axon::tile {

enum class Scope { Input, Output, Memory, Scratch, Register, Shared };
const char* scope_name(Scope s);

struct Buffer {
  std::string name;
  ir::DType dtype = ir::DType::F32;
  ir::Shape shape;
  Scope scope = Scope::Memory;
  int param = -1;   // Input: the parameter's position
  int output = -1;  // Output: the result's position
  int64_t numel() const { return ir::Type{dtype, shape}.numel(); }
};

/// The length of a flat buffer that a strided array reaches, from its
/// (extent, element stride) per axis: 1 + sum (extent - 1) * stride (a
/// stride of 0 broadcasts the axis).
inline int64_t strided_length(std::initializer_list<std::pair<int64_t, int64_t>> axes) {
  int64_t n = 1;
  for (auto [extent, stride] : axes) n += (extent - 1) * stride;
  return n;
}

}  // namespace axon::tile
