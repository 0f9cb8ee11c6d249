"""A chain of four written left to right whose last factor is a thin
matrix: ((A @ B) @ C) @ D with D of 8 columns is three n^3 products, while
right to left it is three n^2 * 8."""

import numpy as np


def c6_four_chain(A: "f32[512, 512]", B: "f32[512, 512]", C: "f32[512, 512]", D: "f32[512, 8]"):
    return ((A @ B) @ C) @ D
