# ERROR: FILE: entry function 'nosuch' is not defined
# ARGS: --entry nosuch
import numpy as np


def f(x: "f32[3]"):
    return x
