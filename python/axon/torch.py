"""axon.torch: an axon kernel as a PyTorch custom op.

    import axon.torch
    rmsnorm = axon.torch.op("mylib::rmsnorm", rmsnorm_spec)   # or @axon.torch.op("mylib::rmsnorm")

registers the spec's kernel with torch.library.custom_op under that name,
with a fake (meta) implementation that computes the outputs' shapes and
dtypes from the spec itself. torch.compile and torch.export then see one
opaque op, `torch.ops.mylib.rmsnorm`, instead of breaking the graph at a call
into foreign code; at run time the op calls the @axon.jit kernel for the
inputs' shapes (searched once per shape, as @axon.jit does).

The op's schema takes one Tensor per spec parameter and returns one Tensor
per output. The number of outputs is read from the spec with every named
dim bound to a small size; give outputs=N where the spec cannot be read so.
"""

import torch

from ._jit import JitFunction, jit
from .errors import SpecError

TORCH_DTYPES = {"bool": torch.bool, "i32": torch.int32, "i64": torch.int64, "f16": torch.float16,
                "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64}


def _count_outputs(jf):
    names = sorted({n for p in jf.params() for n in p.names if n})
    last = None
    for size in (16, 64, 128):
        try:
            return len(jf.program({n: size for n in names}).outputs)
        except SpecError as e:
            last = e
    raise SpecError(f"axon.torch.op could not count the outputs of '{jf.__name__}' with its named dims bound to "
                    f"small sizes; pass outputs=N\n{last}")


def op(name, fn=None, *, outputs=None, **jit_options):
    """Registers `fn` (a function or an @axon.jit function) as the custom op `name` ("lib::op")."""
    if fn is None:
        return lambda f: op(name, f, outputs=outputs, **jit_options)
    jf = fn if isinstance(fn, JitFunction) else jit(fn, **jit_options)
    params = jf.params()
    n_out = int(outputs) if outputs is not None else _count_outputs(jf)
    results = "Tensor" if n_out == 1 else "(" + ", ".join(["Tensor"] * n_out) + ")"
    schema = "(" + ", ".join(f"Tensor {p.name}" for p in params) + ") -> " + results

    def run(*args):
        return jf(*args)

    custom = torch.library.custom_op(name, run, mutates_args=(), schema=schema)

    def fake(*args):
        types = jf.output_types(*[(tuple(int(n) for n in a.shape), a.dtype) for a in args])
        outs = [args[0].new_empty(tuple(shape), dtype=TORCH_DTYPES[d]) for d, shape in types]
        return outs[0] if n_out == 1 else tuple(outs)

    custom.register_fake(fake)
    custom.axon_function = jf
    return custom
