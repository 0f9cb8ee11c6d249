# ERROR: 6:15: einsum: operand 0 is f32[3, 4] but its subscripts 'ijk' name 3
import numpy as np


def f(a: "f32[3, 4]", b: "f32[4, 6]"):
    return np.einsum("ijk,jk->i", a, b)
