# ERROR: 6:14: shapes f32[3, 4] and f32[5] do not broadcast
import numpy as np


def f(x: "f32[3, 4]", y: "f32[5]"):
    return x + y
