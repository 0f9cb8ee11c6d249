# Adding a row vector to a matrix inserts an explicit broadcast of the vector.
# RUN: axon check %s
import numpy as np


def broadcast_add(x: "f32[3, 4]", b: "f32[4]"):
    return x + b

# CHECK: func broadcast_add(x: f32[3, 4], b: f32[4]) -> (f32[3, 4]) {
# CHECK: %0: f32[3, 4] = param() {index = 0, name = "x"}
# CHECK: %1: f32[4] = param() {index = 1, name = "b"}
# CHECK: %2: f32[1, 4] = reshape(%1)
# CHECK: %3: f32[3, 4] = broadcast(%2)
# CHECK: %4: f32[3, 4] = add(%0, %3)
# CHECK: return %4
# CHECK: }
