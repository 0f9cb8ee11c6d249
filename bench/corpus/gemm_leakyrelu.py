"""A matrix product, a bias and a LeakyReLU."""

import numpy as np

def gemm_leakyrelu(x: "f32[512, 1024]", w: "f32[1024, 2048]", b: "f32[2048]"):
    y = x @ w + b
    return np.where(y > 0, y, 0.01 * y)
