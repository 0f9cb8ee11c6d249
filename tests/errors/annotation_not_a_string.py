# ERROR: 5:10: annotation
import numpy as np


def f(x: float):
    return x
