import numpy as np


def prog(p2: "f32[2, 6]", p3: "f32[6, 2]"):
    v0 = (p2 @ p3)
    v2 = (v0 @ v0)
    return v2
