"""s5 GELU after its rewrites (tanh via exp, constants folded): the form its
optimised kernels are found on, for `axon compile --schedule`."""

import numpy as np

def s5_gelu(X: "f32[4096, 2048]"):
    return X / (1.0 + np.exp(-1.5957691216057308 * (X + 0.044715 * X * X * X)))
