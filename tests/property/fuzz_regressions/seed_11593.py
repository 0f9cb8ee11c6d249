import numpy as np


def prog(p0: "f32[]"):
    v0 = np.exp(np.tanh(p0))
    v1 = (v0 * (1.0 / (np.abs(v0) + 1.0)))
    v2 = (v0 / (np.abs(v1) + 1.0))
    v3 = (v2 - 3)
    v4 = (v3 * np.reciprocal(np.abs(v2) + 1.0))
    v5 = (v4 * v4)
    v6 = (v2 * (1.0 / (np.abs(v5) + 1.0)))
    return v6
