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

#include <string>

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

}  // namespace axon::tile
