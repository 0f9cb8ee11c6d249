"""axon from Python: numpy functions compiled to verified, searched kernels.

    import axon, numpy as np

    @axon.jit(budget=30)                    # or plain @axon.jit
    def scale(x: "f32[N, 64]", w: "f32[64]"):
        return np.tanh(x * w)

    y = scale(x, w)                         # numpy arrays or torch CPU tensors

The function's source is the spec (the numpy subset of the CLI, string
annotations naming dtypes and dims); the named dims are bound from the
arguments' shapes; each new signature is searched once (axon optimize, with
its tuning database under the user's cache folder) and then served from
memory. `scale.report(x, w)` is report.json as a dict, `scale.source(x, w)`
the kernel's C++, `axon.optimize(path_or_fn, shapes)` the explicit form;
`axon.torch.op("lib::name", fn)` makes a torch custom op of it.
"""

from .errors import (CopyWarning, InternalError, SearchWarning, ShapeError, SpecError,  # noqa: F401
                     VerificationError)
from ._jit import Compiled, JitFunction, jit, optimize  # noqa: F401
from . import _axon


def default_db_path():
    """The tuning database used when none is given: $AXON_DB, else $XDG_CACHE_HOME/axon/tuning.sqlite,
    else ~/.cache/axon/tuning.sqlite."""
    return _axon.default_db_path()


__all__ = ["jit", "optimize", "JitFunction", "Compiled", "SpecError", "ShapeError", "VerificationError",
           "InternalError", "CopyWarning", "SearchWarning", "default_db_path"]
