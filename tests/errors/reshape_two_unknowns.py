# ERROR: 6:14: can only specify one unknown dimension
import numpy as np


def f(x: "f32[3, 4]"):
    return x.reshape(-1, -1)
