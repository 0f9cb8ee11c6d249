# ERROR: 3:8: unsupported: import of module 'torch' is not supported
import numpy as np
import torch


def f(x: "f32[3]"):
    return x + 1.0
