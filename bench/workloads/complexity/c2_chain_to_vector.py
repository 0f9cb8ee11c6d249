"""A chain ending in a matrix-vector product, written left to right:
(A @ B) @ v is n^3 work, A @ (B @ v) is n^2."""

import numpy as np


def c2_chain_to_vector(A: "f32[1024, 1024]", B: "f32[1024, 1024]", v: "f32[1024]"):
    return (A @ B) @ v
