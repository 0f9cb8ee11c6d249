# np.mean with keepdims: a sum over the axis, a division by its length, and a
# reshape that puts the unit axis back.
# RUN: axon check %s
import numpy as np


def mean_keepdims(x: "f32[2, 3, 4]"):
    return np.mean(x, axis=-1, keepdims=True)

# CHECK: func mean_keepdims(x: f32[2, 3, 4]) -> (f32[2, 3, 1]) {
# CHECK: %0: f32[2, 3, 4] = param() {index = 0, name = "x"}
# CHECK: %1: f32[2, 3] = reduce_sum(%0) {axes = [2]}
# CHECK: %2: f32[] = constant() {value = 4}
# CHECK: %3: f32[1, 1] = reshape(%2)
# CHECK: %4: f32[2, 3] = broadcast(%3)
# CHECK: %5: f32[2, 3] = div(%1, %4)
# CHECK: %6: f32[2, 3, 1] = reshape(%5)
# CHECK: return %6
# CHECK: }
