// SPEC: tests/gate/specs/rowsum.py  EXPECT: crash
// Stores through a null pointer. The address comes from a volatile integer
// and the store itself is volatile, so the compiler can neither see that it
// is null nor drop the store as undefined behaviour.
#include <cstdint>

extern "C" void rowsum(const float* X, float* out0) {
  volatile std::uintptr_t address = 0;
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j) s += X[i * 250 + j];
    out0[i] = s;
  }
  *reinterpret_cast<volatile float*>(address) = out0[0];
}
