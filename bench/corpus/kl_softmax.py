"""KL divergence between the softmax distributions of two logit rows, one value per row."""

import numpy as np

def log_softmax(z):
    m = np.max(z, axis=-1, keepdims=True)
    return z - m - np.log(np.sum(np.exp(z - m), axis=-1, keepdims=True))

def kl_softmax(p: "f32[1024, 2048]", q: "f32[1024, 2048]"):
    lp = log_softmax(p)
    lq = log_softmax(q)
    return np.sum(np.exp(lp) * (lp - lq), axis=-1)
