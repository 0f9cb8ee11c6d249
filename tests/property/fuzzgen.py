"""Random specs for the command-line fuzzer: progen.py's programs, with each
operation also written in the other ways numpy spells it.

The same value reaches axon's frontend, rewrites and code generators in
several shapes: a quotient as `a / b`, `a * (1 / b)`, `a * np.reciprocal(b)`
or `a * b ** -1`; a square root as `np.sqrt(x)` or `x ** 0.5`; a square as
`x * x`, `x ** 2` or `np.square(x)`; SiLU and the logistic function as a
product with a reciprocal or as one division, after matmuls or not. The
rest (reductions over any axes, broadcasts, reshapes, transposes, slices,
matmuls and einsums) is progen's. The numerics stay tame as in progen:
every denominator is at least 1 in magnitude, every root is of a value at
least 0.5.

generate(seed) is deterministic: the same seed gives the same program.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import progen  # noqa: E402
from progen import Expr, V  # noqa: E402

# One argument: the equivalent spellings sit side by side.
UNARY_FORMS = [
    "(1.0 / (np.abs({0}) + 1.0))", "np.reciprocal(np.abs({0}) + 1.0)", "((np.abs({0}) + 1.0) ** -1)",
    "np.sqrt(np.abs({0}) + 0.5)", "((np.abs({0}) + 0.5) ** 0.5)",
    "({0} * {0})", "({0} ** 2)", "np.square({0})",
    "({0} * (1.0 / (1.0 + np.exp(-np.tanh({0})))))", "({0} / (1.0 + np.exp(-np.tanh({0}))))",
    "({0} * np.reciprocal(1.0 + np.exp(-np.tanh({0}))))",
    "(1.0 / (1.0 + np.exp(-np.tanh({0}))))",
    "(0.5 * {0} * (2.0 / (np.abs({0}) + 1.0)))", "(({0} * 0.25) * 4.0)", "(({0} / 4.0) * 2.0)",
    "(-(-{0}))", "(1.0 * {0})",
]
# Two arguments.
BINARY_FORMS = [
    "({0} / (np.abs({1}) + 1.0))", "({0} * (1.0 / (np.abs({1}) + 1.0)))",
    "({0} * np.reciprocal(np.abs({1}) + 1.0))", "({0} * (np.abs({1}) + 1.0) ** -1)",
    "(({0} * 0.5) * ({1} * 2.0))", "(({0} + {1}) * 0.5)", "(0.5 * {0} + 0.5 * {1})",
    "({0} - (-{1}))",
]


class FormsBuilder(progen._Builder):
    """progen's builder; half of the elementwise statements use the forms above."""

    def build(self, kind):
        if kind in ("unary", "binary") and self.rng.random() < 0.5:
            a = self.pick()
            if a is None:
                return None
            if kind == "unary":
                return Expr(self.rng.choice(UNARY_FORMS), (V(a),))
            va = self.values[a]
            b = self.pick(lambda v: progen._broadcasts(v.shape, va.shape))
            args = (V(a), V(b)) if self.rng.random() < 0.5 else (V(b), V(a))
            return Expr(self.rng.choice(BINARY_FORMS), args)
        return super().build(kind)


def generate(seed, statements=None):
    return progen.generate(seed, statements, builder=FormsBuilder)
