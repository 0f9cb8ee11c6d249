# ERROR: 6:15: all the input array dimensions except for the concatenation axis must match exactly
import numpy as np


def f(a: "f32[2, 3]", b: "f32[2, 4]"):
    return np.concatenate([a, b], axis=0)
