// SPEC: tests/gate/specs/silu.py  EXPECT: forbidden_symbol
// Loads a shared library at run time and looks up expf in it: code the
// checker never saw could run instead.
#include <dlfcn.h>

#include <cmath>

extern "C" void silu(const float* X, float* out0) {
  using ExpFn = float (*)(float);
  ExpFn e = nullptr;
  if (void* lib = dlopen("libm.so.6", RTLD_NOW)) e = reinterpret_cast<ExpFn>(dlsym(lib, "expf"));
  for (int i = 0; i < 100 * 130; ++i) out0[i] = X[i] / (1.0f + (e ? e(-X[i]) : std::exp(-X[i])));
}
