# ERROR: 5:20: duplicate argument 'x'
import numpy as np


def f(x: "f32[3]", x: "f32[3]"):
    return x
