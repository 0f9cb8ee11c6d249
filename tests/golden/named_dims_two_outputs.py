# Named dims bound with -D, and a tuple return: two outputs in order.
# RUN: axon check %s -D M=8 -D N=16
import numpy as np


def named_dims_two_outputs(x: "f32[M, N]", g: "f32[N]"):
    return np.max(x, axis=0) * g, np.sum(x, axis=1)

# CHECK: func named_dims_two_outputs(x: f32[8, 16], g: f32[16]) -> (f32[16], f32[8]) {
# CHECK: %0: f32[8, 16] = param() {index = 0, name = "x"}
# CHECK: %1: f32[16] = param() {index = 1, name = "g"}
# CHECK: %2: f32[16] = reduce_max(%0) {axes = [0]}
# CHECK: %3: f32[16] = mul(%2, %1)
# CHECK: %4: f32[8] = reduce_sum(%0) {axes = [1]}
# CHECK: return %3, %4
# CHECK: }
