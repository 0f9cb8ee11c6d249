// The float64 twin of a graph: the same computation with every floating
// value carried in f64, so that a compiled kernel of the twin computes what
// the reference interpreter (verify/interpreter.h) computes for the original:
// float64 everywhere, rounding only at Cast.
//
//   param of f16/bf16/f32        param of f64 (the same values, exactly)
//   value of f16/bf16/f32/f64    value of f64 (constants keep their double)
//   cast to f16/bf16/f32         cast to that type, then cast back to f64:
//                                the rounding the original asks for is kept
//   cast to f64                  dropped where its operand is already f64
//   integer and bool values      unchanged (their dtypes are kept)
//
// Outputs keep their order; a floating output of the original is f64 in the
// twin. The twin is compacted (verify/README.md, "The float64 twin").
#pragma once

#include "ir/graph.h"

namespace axon::verify {

/// F64 for F16, BF16, F32 and F64; `d` itself for integer and bool types.
ir::DType twin_dtype(ir::DType d);

/// The float64 twin of `g` (above). Its entry is g.entry + "_f64".
ir::Graph float64_twin(const ir::Graph& g);

}  // namespace axon::verify
