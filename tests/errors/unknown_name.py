# ERROR: 6:16: name 'y' is not defined
import numpy as np


def f(x: "f32[3]"):
    return x + y
