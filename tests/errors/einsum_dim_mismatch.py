# ERROR: 6:15: einsum: subscript 'j' has size 4 in one operand and 5
import numpy as np


def f(a: "f32[3, 4]", b: "f32[5, 6]"):
    return np.einsum("ij,jk->ik", a, b)
