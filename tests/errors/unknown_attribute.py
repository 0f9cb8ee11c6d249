# ERROR: 6:14: has no attribute 'foo'
import numpy as np


def f(x: "f32[3]"):
    return x.foo + 1.0
