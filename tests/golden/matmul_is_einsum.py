# `@` on matrices is the one contraction op, spelled as an einsum.
# RUN: axon check %s
import numpy as np


def matmul_is_einsum(a: "f32[3, 4]", b: "f32[4, 5]"):
    return a @ b

# CHECK: func matmul_is_einsum(a: f32[3, 4], b: f32[4, 5]) -> (f32[3, 5]) {
# CHECK: %0: f32[3, 4] = param() {index = 0, name = "a"}
# CHECK: %1: f32[4, 5] = param() {index = 1, name = "b"}
# CHECK: %2: f32[3, 5] = einsum(%0, %1) {spec = "mk,kn->mn"}
# CHECK: return %2
# CHECK: }
