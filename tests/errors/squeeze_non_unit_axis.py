# ERROR: 6:31: cannot select an axis to squeeze out which has size not equal to one
import numpy as np


def f(x: "f32[3, 4]"):
    return np.squeeze(x, axis=0)
