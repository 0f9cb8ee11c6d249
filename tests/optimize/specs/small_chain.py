"""A matrix chain whose reassociation is worth it: (A@B)@C does
2*256*256*256 multiply-adds, A@(B@C) 2*256*256*4 (docs/rewrites.md)."""

import numpy as np

def small_chain(A: "f32[256, 256]", B: "f32[256, 256]", C: "f32[256, 4]"):
    return (A @ B) @ C
