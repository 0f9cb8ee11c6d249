"""Arguments against a spec's parameters: dims bound, conversions decided.

prepare(args, params) checks the arguments of a call against the entry's
annotations and returns (arrays, dims): the arrays to pass to the kernel and
the named dims their shapes bind. The rules (tests/python/test_arguments.py):

- numpy arrays and torch CPU tensors are taken as they are when they are
  C-contiguous; one that is not is copied for the call, with a CopyWarning
  (the kernel reads dense row-major buffers);
- a torch tensor that requires grad is read through .detach();
- a Python bool, int or float is accepted for a 0-d parameter and made a 0-d
  numpy array of the parameter's dtype;
- anything else, a dtype other than the annotation's (no silent casts: a
  float64 array given to an f32 parameter is refused), a wrong rank, a
  numbered dim that differs or a named dim bound to two sizes raise
  ShapeError naming the parameter.
"""

import numpy as np

from . import _axon
from .errors import CopyWarning, ShapeError, warn

# axon's dtype names (ir/type.h) and numpy's.
NUMPY_DTYPES = {"bool": np.dtype(np.bool_), "i32": np.dtype(np.int32), "i64": np.dtype(np.int64),
                "f16": np.dtype(np.float16), "f32": np.dtype(np.float32), "f64": np.dtype(np.float64)}
_FROM_NUMPY = {v: k for k, v in NUMPY_DTYPES.items()}


def torch_dtype_names():
    import torch
    return {torch.bool: "bool", torch.int32: "i32", torch.int64: "i64", torch.float16: "f16",
            torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64"}


def is_torch(a):
    t = type(a)
    return t.__module__.startswith("torch") and hasattr(a, "is_contiguous") and hasattr(a, "device")


class Param:
    """One entry parameter: its name and its annotation's dtype, sizes (-1: named) and names."""

    def __init__(self, name, annotation, where):
        self.name = name
        self.dtype, self.sizes, self.names = _axon.annotation_pattern(annotation, where)

    def describe(self):
        dims = ", ".join(n if n else str(s) for s, n in zip(self.sizes, self.names))
        return f"{self.dtype}[{dims}]"


def _convert(a, p):
    """The array to pass for `a`, or ShapeError; copies (with a warning) only a non-contiguous array."""
    if is_torch(a):
        if a.device.type != "cpu":
            raise ShapeError(f"argument '{p.name}' is a torch tensor on {a.device}; axon's kernels run on the CPU")
        got = torch_dtype_names().get(a.dtype, str(a.dtype))
        if got != p.dtype:
            raise ShapeError(f"argument '{p.name}' has dtype {a.dtype}; the spec annotates it {p.describe()} "
                             f"(convert it with .to(), axon does not cast)")
        if a.requires_grad:
            a = a.detach()
        if not a.is_contiguous():
            warn(f"argument '{p.name}' is not contiguous; axon copies it for this call "
                          f"(pass .contiguous() to avoid the copy)", CopyWarning)
            a = a.contiguous()
        return a
    if isinstance(a, (bool, int, float)) and not p.sizes and p.dtype in NUMPY_DTYPES:
        return np.asarray(a, dtype=NUMPY_DTYPES[p.dtype])
    if not isinstance(a, np.ndarray):
        raise ShapeError(f"argument '{p.name}' is a {type(a).__name__}; axon takes numpy arrays and torch CPU "
                         f"tensors ({p.describe()})")
    got = _FROM_NUMPY.get(a.dtype, str(a.dtype))
    if got != p.dtype:
        raise ShapeError(f"argument '{p.name}' has dtype {a.dtype}; the spec annotates it {p.describe()} "
                         f"(convert it with .astype(), axon does not cast)")
    if not a.flags.c_contiguous:
        warn(f"argument '{p.name}' is not C-contiguous; axon copies it for this call "
                      f"(pass np.ascontiguousarray() to avoid the copy)", CopyWarning)
        a = np.ascontiguousarray(a)
    return a


def _bind(shape, p, dims):
    """Checks one parameter's shape against its annotation and binds its named dims into `dims`."""
    shape = tuple(int(n) for n in shape)
    if len(shape) != len(p.sizes):
        raise ShapeError(f"argument '{p.name}' has shape {list(shape)}, rank {len(shape)}; "
                         f"the spec annotates it {p.describe()}, rank {len(p.sizes)}")
    for axis, (n, size, name) in enumerate(zip(shape, p.sizes, p.names)):
        if not name:
            if n != size:
                raise ShapeError(f"argument '{p.name}' has shape {list(shape)}; the spec annotates it "
                                 f"{p.describe()}: dim {axis} must be {size}")
        elif dims.setdefault(name, n) != n:
            raise ShapeError(f"argument '{p.name}' has shape {list(shape)}, which binds {name}={n}, "
                             f"but an earlier argument bound {name}={dims[name]} ({p.describe()})")


def _check_count(n, params):
    if n != len(params):
        names = ", ".join(p.name for p in params)
        raise ShapeError(f"expected {len(params)} arguments ({names}), got {n}")


def bind_shapes(shapes, params):
    """The named dims that one shape per parameter binds (ShapeError when they do not fit)."""
    shapes = list(shapes)
    _check_count(len(shapes), params)
    dims = {}
    for s, p in zip(shapes, params):
        _bind(s, p, dims)
    return dims


def prepare(args, params):
    _check_count(len(args), params)
    arrays = []
    dims = {}
    for a, p in zip(args, params):
        a = _convert(a, p)
        _bind(a.shape, p, dims)
        arrays.append(a)
    return arrays, dims
