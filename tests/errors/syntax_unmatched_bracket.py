# ERROR: 6:13: unmatched ']'
import numpy as np


def f(x: "f32[3]"):
    return x]
