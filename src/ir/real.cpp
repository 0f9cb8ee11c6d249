#include "ir/real.h"

#include <cmath>
#include <cstring>

namespace axon::ir {

double round_to_bf16(double x) {
  // Round to float with round-to-odd first (truncate, then make the last bit
  // sticky when inexact), so that the final rounding to bf16 is the only one.
  float f = static_cast<float>(x);
  if (std::isnan(f) || std::isinf(x)) return x;
  if (static_cast<double>(f) != x) {
    if (std::fabs(static_cast<double>(f)) > std::fabs(x)) f = std::nextafter(f, 0.0f);
    uint32_t t;
    std::memcpy(&t, &f, 4);
    t |= 1;
    std::memcpy(&f, &t, 4);
  }
  uint32_t b;
  std::memcpy(&b, &f, 4);
  b += 0x7fff + ((b >> 16) & 1);
  b &= 0xffff0000u;
  std::memcpy(&f, &b, 4);
  return f;
}

double round_to_f16(double x) { return static_cast<double>(static_cast<_Float16>(x)); }

}  // namespace axon::ir
