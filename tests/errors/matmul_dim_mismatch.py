# ERROR: 6:14: matmul: contraction dims 4 and 5 do not match
import numpy as np


def f(a: "f32[3, 4]", b: "f32[5, 6]"):
    return a @ b
