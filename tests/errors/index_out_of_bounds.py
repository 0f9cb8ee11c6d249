# ERROR: 6:14: index 5 is out of bounds for axis 0 with size 3
import numpy as np


def f(x: "f32[3, 4]"):
    return x[5]
