# SiLU after a matmul, written as y * (1 / (1 + exp(-y))): once a crash of the
# rewrite exploration (tests/optimize/test_robust.py).
import numpy as np

def f(x: "f32[128, 1024]", W: "f32[1024, 1024]"):
    y = x @ W
    return y * (1.0 / (1.0 + np.exp(-y)))
