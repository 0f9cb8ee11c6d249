# A helper is inlined (no call in the IR) and concatenate is one concat node.
# RUN: axon check %s
import numpy as np


def double(v):
    return v * 2.0


def concat_and_helper(a: "f32[2, 3]", b: "f32[2, 5]"):
    return np.concatenate([double(a), b], axis=1)

# CHECK: func concat_and_helper(a: f32[2, 3], b: f32[2, 5]) -> (f32[2, 8]) {
# CHECK: %0: f32[2, 3] = param() {index = 0, name = "a"}
# CHECK: %1: f32[2, 5] = param() {index = 1, name = "b"}
# CHECK: %2: f32[] = constant() {value = 2}
# CHECK: %3: f32[1, 1] = reshape(%2)
# CHECK: %4: f32[2, 3] = broadcast(%3)
# CHECK: %5: f32[2, 3] = mul(%0, %4)
# CHECK: %6: f32[2, 8] = concat(%5, %1) {axis = 1}
# CHECK: return %6
# CHECK: }
