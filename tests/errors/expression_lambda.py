# ERROR: 6:9: unsupported: lambda expressions are not supported
import numpy as np


def f(x: "f32[3]"):
    g = lambda v: v * 2.0
    return g(x)
