# ERROR: 5:11: unknown dtype 'f33'
import numpy as np


def f(x: "f33[3, 4]"):
    return x
