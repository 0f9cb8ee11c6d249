# A triangular mask from np.triu(np.ones(...)) becomes iota comparisons and a select.
# RUN: axon check %s
import numpy as np


def causal_mask(s: "f32[4, 4]"):
    mask = np.triu(np.ones((4, 4), dtype=bool), k=1)
    return np.where(mask, -np.inf, s)

# CHECK: func causal_mask(s: f32[4, 4]) -> (f32[4, 4]) {
# CHECK: %0: f32[4, 4] = param() {index = 0, name = "s"}
# CHECK: %1: bool[] = constant() {value = 1}
# CHECK: %2: bool[1, 1] = reshape(%1)
# CHECK: %3: bool[4, 4] = broadcast(%2)
# CHECK: %4: i64[4, 4] = iota() {axis = 0}
# CHECK: %5: i64[4, 4] = iota() {axis = 1}
# CHECK: %6: i64[4, 4] = sub(%5, %4)
# CHECK: %7: i64[] = constant() {value = 1}
# CHECK: %8: i64[1, 1] = reshape(%7)
# CHECK: %9: i64[4, 4] = broadcast(%8)
# CHECK: %10: bool[4, 4] = ge(%6, %9)
# CHECK: %11: bool[] = constant() {value = 0}
# CHECK: %12: bool[1, 1] = reshape(%11)
# CHECK: %13: bool[4, 4] = broadcast(%12)
# CHECK: %14: bool[4, 4] = select(%10, %3, %13)
# CHECK: %15: f32[] = constant() {value = -inf}
# CHECK: %16: f32[1, 1] = reshape(%15)
# CHECK: %17: f32[4, 4] = broadcast(%16)
# CHECK: %18: f32[4, 4] = select(%14, %17, %0)
# CHECK: return %18
# CHECK: }
