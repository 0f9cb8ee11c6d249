# tanh(a) * 2 over a small array: a row kernel exists for it, so the search
# can beat (and replace) a failing naive kernel (test_failing_baseline.py).
import numpy as np

def scale(a: "f32[16, 64]"):
    return np.tanh(a) * 2.0
