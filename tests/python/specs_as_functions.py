"""Specs written as functions of a module, for @axon.jit (tests/python).

scale_rows is the plain case; rms_stats uses a helper function and a
module constant, which the package puts into the spec as the CLI's spec
file would hold them, and returns two outputs.
"""

import numpy as np

EPS = 1e-5


def scale_rows(x: "f32[N, 64]", w: "f32[64]"):
    return np.tanh(x * w) + 1.0


def _mean_square(x):
    return np.mean(x * x, axis=-1, keepdims=True)


def rms_stats(x: "f32[R, C]"):
    ms = _mean_square(x)
    return x / np.sqrt(ms + EPS), ms[:, 0]


def mismatched(x: "f32[N, 64]", w: "f32[32]"):
    return x * w
