"""A small matmul for the optimize tests."""

import numpy as np

def small_matmul(A: "f32[64, 96]", B: "f32[96, 80]"):
    return A @ B
