"""Mean squared error per sample of a [batch, tokens, features] prediction: a mean over axes (1, 2)."""

import numpy as np

def mse_per_sample(pred: "f32[32, 256, 256]", target: "f32[32, 256, 256]"):
    return np.mean(np.square(pred - target), axis=(1, 2))
