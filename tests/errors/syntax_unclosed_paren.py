# ERROR: 6:12: '(' was never closed
import numpy as np


def f(x: "f32[3]"):
    return (x + 1.0
