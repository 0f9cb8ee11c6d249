# np.mean with keepdims: a sum over the axis, a division by its length, and a
# reshape that puts the unit axis back.
# RUN: axon check %s
import numpy as np


def mean_keepdims(x: "f32[2, 3, 4]"):
    return np.mean(x, axis=-1, keepdims=True)

# CHECK: func mean_keepdims(x: f32[2, 3, 4]) -> (f32[2, 3, 1]) {
# CHECK: f32[2, 3] = reduce_sum(%0) {axes = [2]}
# CHECK: f32[2, 3] = div(
# CHECK: f32[2, 3, 1] = reshape(
