# ERROR: 7:9: unexpected indent
import numpy as np


def f(x: "f32[3]"):
    y = x + 1.0
        return y
