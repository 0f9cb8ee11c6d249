"""The total of a product: np.sum(A @ B) is the column sums of A dotted with
the row sums of B, n^2 work in place of n^3 (sum-into-contraction)."""

import numpy as np

def total_of_product(A: "f32[512, 512]", B: "f32[512, 512]"):
    return np.sum(A @ B)
