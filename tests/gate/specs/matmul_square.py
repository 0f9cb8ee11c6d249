"""Square matrix product: a result with rows and columns swapped still has
the right shape, so only the values can give it away."""

import numpy as np


def matmul_square(A: "f32[64, 64]", B: "f32[64, 64]"):
    return A @ B
