"""A matrix product, LeakyReLU, then the sum of each column (over the batch): a reduction over axis 0 after a GEMM."""

import numpy as np

def gemm_colsum(x: "f32[1024, 512]", w: "f32[512, 512]"):
    y = x @ w
    return np.sum(np.maximum(y, 0.1 * y), axis=0)
