# A triangular mask from np.triu(np.ones(...)) becomes iota comparisons and a select.
# RUN: axon check %s
import numpy as np


def causal_mask(s: "f32[4, 4]"):
    mask = np.triu(np.ones((4, 4), dtype=bool), k=1)
    return np.where(mask, -np.inf, s)

# CHECK: func causal_mask(s: f32[4, 4]) -> (f32[4, 4]) {
# CHECK: = iota() {axis = 0}
# CHECK: = iota() {axis = 1}
# CHECK: bool[4, 4] =
# CHECK: f32[4, 4] = select(
