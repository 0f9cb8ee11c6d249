# ERROR: 5:15: dimension M is not bound
import numpy as np


def f(x: "f32[M, 4]"):
    return x * 2.0
