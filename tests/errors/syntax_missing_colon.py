# ERROR: 5:19: expected ':'
import numpy as np


def f(x: "f32[3]")
    return x
