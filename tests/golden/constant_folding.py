# Scalar arithmetic on constants folds to a single constant before it reaches
# the graph: no log, sqrt or pow node.
# RUN: axon check %s
# CHECK-NOT: log(
# CHECK-NOT: sqrt(
# CHECK-NOT: pow(
import numpy as np


def constant_folding(x: "f32[8]"):
    scale = (0.1 * np.log(40.0) + 1.0) ** 2 / np.sqrt(192.0)
    return x * scale

# CHECK: func constant_folding(x: f32[8]) -> (f32[8]) {
# CHECK: %0: f32[8] = param() {index = 0, name = "x"}
# CHECK: %1: f32[] = constant() {value = 0.1352337788608801}
# CHECK: %2: f32[1] = reshape(%1)
# CHECK: %3: f32[8] = broadcast(%2)
# CHECK: %4: f32[8] = mul(%0, %3)
# CHECK: return %4
# CHECK: }
