// Tensor: a dense row-major array of float64 values with its IR type, the
// currency of the reference interpreters, the random inputs and the kernel
// buffers' conversions (bool as 0/1, ints exactly).
#pragma once

#include <vector>

#include "ir/type.h"

namespace axon::ir {

struct Tensor {
  Type type;
  std::vector<double> data;
};

}  // namespace axon::ir
