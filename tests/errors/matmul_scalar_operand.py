# ERROR: 6:14: matmul: operand 0 is 0-d
import numpy as np


def f(a: "f32[3, 4]", s: "f32[]"):
    return s @ a
