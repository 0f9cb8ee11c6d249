# ERROR: 6:12: operator ~ needs a bool or integer array, got f32[3]
import numpy as np


def f(x: "f32[3]"):
    return ~x
