# A Huber loss over a small array: a full reduction (test_failing_baseline.py
# runs it with AXON_TEST_NAIVE_ONLY, so the naive kernel is the only kernel).
import numpy as np

def huber(a: "f32[64, 64]", b: "f32[64, 64]"):
    d = a - b
    return np.mean(np.where(np.abs(d) < 1, 0.5 * d * d, np.abs(d) - 0.5))
