"""m1 as `axon optimize` rewrites it: the row scale of RMSNorm moved past
the matmul (factor-out-of-contraction), where it is the GEMM's epilogue,
and the gain moved onto the weight (factor-across-contraction), which the
GEMM computes as it packs B (a prologue). Compile this to time the kernel
optimize builds; verify it against bench/workloads/m1_rmsnorm_matmul.py
(same ABI)."""

import numpy as np

def m1_rmsnorm_matmul(X: "f32[1024, 4096]", g: "f32[4096]", W: "f32[4096, 1024]"):
    s = 1.0 / np.sqrt(np.mean(X * X, axis=-1, keepdims=True) + 1e-6)
    return (X @ (W * g[:, None])) * s
