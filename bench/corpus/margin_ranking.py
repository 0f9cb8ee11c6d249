"""Margin ranking loss between two score vectors, per batch row: mean over the last axis."""

import numpy as np

def margin_ranking(a: "f32[256, 4096]", b: "f32[256, 4096]", y: "f32[256, 4096]"):
    return np.mean(np.maximum(0.0, -y * (a - b) + 0.5), axis=-1)
