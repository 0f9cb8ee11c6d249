"""Hinge (margin) loss of scores against labels of +-1, averaged over every element."""

import numpy as np

def hinge_loss(score: "f32[4096, 512]", y: "f32[4096, 512]"):
    return np.mean(np.maximum(0.0, 1.0 - y * score))
