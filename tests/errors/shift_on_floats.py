# ERROR: 6:14: operator << needs bool or integer operands
import numpy as np


def f(x: "f32[3]"):
    return x << 1
