"""A small SiLU for the proposer tests: cheap to optimize and to gate."""

import numpy as np


def small_silu(X: "f32[64, 256]"):
    return X / (1.0 + np.exp(-X))
