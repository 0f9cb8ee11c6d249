"""The row sums of a product: np.sum(A @ B, axis=1) equals A @ B.sum(1),
n^2 work in place of n^3 (sum-into-contraction, docs/rewrites.md)."""

import numpy as np

def rowsum_of_product(A: "f32[512, 512]", B: "f32[512, 512]"):
    return np.sum(A @ B, axis=1)
