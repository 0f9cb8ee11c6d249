# Batched `@` whose batch dims broadcast (2, 1) against (5,).
# RUN: axon check %s
import numpy as np


def batched_matmul_broadcast(a: "f32[2, 1, 3, 4]", b: "f32[5, 4, 6]"):
    return a @ b

# CHECK: func batched_matmul_broadcast(a: f32[2, 1, 3, 4], b: f32[5, 4, 6]) -> (f32[2, 5, 3, 6]) {
# CHECK: %0: f32[2, 1, 3, 4] = param() {index = 0, name = "a"}
# CHECK: %1: f32[5, 4, 6] = param() {index = 1, name = "b"}
# CHECK: %2: f32[2, 3, 4] = reshape(%0)
# CHECK: %3: f32[2, 5, 3, 6] = einsum(%2, %1) {spec = "amk,bkn->abmn"}
# CHECK: return %3
# CHECK: }
