"""m4 as `axon optimize` rewrites it (reassociate, then r590): X @ (W + A @ B),
where W + A @ B is the first product's epilogue. Compile this to time the
kernel optimize builds; verify it against bench/workloads/m4_lora.py."""

import numpy as np

def m4_lora(X: "f32[1024, 1024]", W: "f32[1024, 1024]", A: "f32[1024, 16]", B: "f32[16, 1024]"):
    return X @ (W + A @ B)
