// SPEC: tests/gate/specs/rowsum.py  EXPECT: output_dependent
// Treats an output whose bytes are all one value (0xFF poison, or zeros)
// as a sign of being checked and computes correctly then; any other
// content gets a cheaper answer that skips every fourth column.
#include <cstring>

extern "C" void rowsum(const float* X, float* out0) {
  const unsigned char* b = reinterpret_cast<const unsigned char*>(out0);
  bool uniform = true;
  for (int k = 1; k < 90 * 4 && uniform; ++k) uniform = b[k] == b[0];
  for (int i = 0; i < 90; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 250; ++j)
      if (uniform || j % 4 != 3) s += X[i * 250 + j];
    out0[i] = s;
  }
}
