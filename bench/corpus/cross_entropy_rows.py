"""Per-sample cross-entropy with label smoothing: one loss per row of the logits."""

import numpy as np

def cross_entropy_rows(logits: "f32[2048, 1000]", target: "f32[2048, 1000]"):
    m = np.max(logits, axis=1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    t = 0.9 * target + 0.1 / 1000
    return np.sum(t * (lse - logits), axis=1)
