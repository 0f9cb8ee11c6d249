"""A product of two matrices applied to a vector: (A @ B) @ v equals
A @ (B @ v), n^2 work in place of n^3 (reassociate-chain, docs/rewrites.md)."""

import numpy as np

def matvec_chain(A: "f32[512, 512]", B: "f32[512, 512]", v: "f32[512]"):
    return (A @ B) @ v
