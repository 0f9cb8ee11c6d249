"""A transpose of the two leading axes added to another tensor: np.transpose(x, (1, 0, 2)) + y."""

import numpy as np

def transpose_add(x: "f32[512, 64, 128]", y: "f32[64, 512, 128]"):
    return np.transpose(x, (1, 0, 2)) + y
