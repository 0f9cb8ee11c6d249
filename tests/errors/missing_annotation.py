# ERROR: 6:23: parameter 'y' of entry function 'f' needs a type annotation
# ARGS: --entry f
import numpy as np


def f(x: "f32[3, 4]", y):
    return x + y
