# ERROR: 6:15: einsum: output subscript 'z' does not appear in the operands
import numpy as np


def f(a: "f32[3, 4]", b: "f32[4, 6]"):
    return np.einsum("ij,jk->iz", a, b)
