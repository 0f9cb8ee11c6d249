// SPEC: tests/gate/specs/rowsum.py  EXPECT: memory_limit
// Asks for a 100 GiB scratch buffer (std::bad_alloc escapes the call if
// the allocation is refused).
#include <cstddef>
#include <memory>

extern "C" void rowsum(const float* X, float* out0) {
  const std::size_t n = (std::size_t{100} << 30) / sizeof(float);
  std::unique_ptr<float[]> scratch(new float[n]);
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += (scratch[static_cast<std::size_t>(i) * (n / 90) + j] = X[i * 250 + j]);
    out0[i] = s;
  }
}
