"""A batched chain applied to a vector per batch: (X @ W) @ u is
batch * n^3 work, X @ (W @ u) is batch * n^2."""

import numpy as np


def c5_batched_chain(X: "f32[8, 512, 512]", W: "f32[512, 512]", u: "f32[512, 1]"):
    return (X @ W) @ u
