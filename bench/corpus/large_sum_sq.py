"""Sum of squares of each row of a 256 MB matrix: the largest program of the corpus, purely bandwidth-bound."""

import numpy as np

def large_sum_sq(x: "f32[8192, 8192]"):
    return np.sum(x * x, axis=-1)
