# .T is a transpose with a reversed perm; a negative-step slice records its
# start and step per axis.
# RUN: axon check %s
import numpy as np


def transpose_and_slice(x: "f32[4, 6]"):
    return x.T[::-1, 1:3]

# CHECK: func transpose_and_slice(x: f32[4, 6]) -> (f32[6, 2]) {
# CHECK: %0: f32[4, 6] = param() {index = 0, name = "x"}
# CHECK: %1: f32[6, 4] = transpose(%0) {perm = [1, 0]}
# CHECK: %2: f32[6, 2] = slice(%1) {starts = [5, 1], steps = [-1, 1]}
# CHECK: return %2
# CHECK: }
