# ERROR: 6:22: unexpected keyword argument 'axes'
import numpy as np


def f(x: "f32[3, 4]"):
    return np.sum(x, axes=0)
