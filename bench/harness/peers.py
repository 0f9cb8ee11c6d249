#!/usr/bin/env python3
"""Times the peers (numpy, PyTorch eager, torch.compile, JAX jit, PyTorch's fused attention) on one workload.

`axon bench` runs this as a subprocess, once per workload, with the inputs
it generated (.npy, float64 values, cast here to each parameter's dtype) and,
when it has them, the float64 reference and the error budget per element:

    peers.py --spec W.py [--entry NAME] [-D M=1024 ...] --inputs in0.npy in1.npy ...
             [--reference ref0.npy ...] [--bound bound0.npy ...]
             [--peers numpy,torch,torch.compile,jax] [--min-seconds 0.2] [--rotate-bytes N]
             [--out result.json]

Every peer runs the same spec file, unchanged: numpy as it is; torch and jax
by executing the file with `import numpy` answered by a small shim that maps
the numpy calls the workloads use onto torch / jax.numpy (see TorchNumpy and
jax_numpy below). "torch.sdpa" is the exception: it runs a hand-written
PyTorch form of the program around torch.nn.functional.scaled_dot_product_attention
(bench/harness/torch_sdpa.py: what a user would call instead of writing
attention out), and is "not applicable: ..." for a program without one.
Before a peer is timed, its output is compared with
numpy's: within 2x the error budget (both are within one budget of the exact
value when correct) or, without a budget, within rtol 1e-3 of numpy's scale.
A peer that is not importable (or is named in $AXON_PEERS_HIDE, a comma
list, which tests use to simulate a missing install) is "not installed"; a
name outside the known five is "unknown peer"; one that raises, or returns
something else, is "failed: reason" or "wrong result: ...". Nothing is
dropped. Timing: warm-up calls (which include torch.compile's and jit's
compilation, reported as compile_s), then repetitions until at least 5 and
--min-seconds, median, min and max in milliseconds.

Cold inputs (--rotate-bytes N, what `axon bench` passes: the stream
probe's working set, target::cold_rotation_bytes): each peer gets the
fewest copies of its input arrays (at least 2) whose bytes, plus one set
of outputs per copy, reach N, and the
timed calls cycle through them, so that no call finds its inputs in cache
from the call before, as axon's own kernels are timed. Outputs are whatever
the peer allocates per call (a fresh array, as a user of it would get).

Dense outputs: axon's kernels write every output dense and row-major. A
peer whose output is a view (numpy's and torch's transposes, which move no
element) is timed with a copy of that output to a dense array after each
call (np.ascontiguousarray, Tensor.contiguous), and its row lists those
outputs under "made_dense"; an output that is dense already is not copied.

Interleaved timing (--interleave-rounds R, with --kernel NAME=LIB.so:SYMBOL
for each compiled kernel to put next to the peers, such as axon's): after
every peer has been checked and timed on its own, the contenders that
passed take turns in one loop: R rounds, in each one burst per contender
(calls until at least 3 and --burst-seconds), the order rotated by one
each round, and each burst after --burst-gap seconds of sleep (default
0.15). The gap matters: the runtimes keep their worker threads spinning
for a while after a call (OpenBLAS by default for 2^28 cycles, about 75 ms
at 3.6 GHz), and on a 2-core machine a burst started within that time
shares its cores with them (bench/gemm/in_place.sh, s1: axon's kernel ran
12.0 ms alone and 22.8 ms interleaved without the gap, 12.0 ms with it).
A kernel is called through ctypes, its inputs rotated cold as
a peer's (as many copies) and one output set reused, as the peers'
allocators reuse theirs, every buffer starting --kernel-offset bytes past
a page boundary (default 0: aligned, as torch's and XLA's allocators and
axon's runtime align; numpy's large arrays start 16 bytes past one, which
halved the speed of axon's s8 transpose); it is checked against numpy's
output as a peer is. A
contender's "interleaved_ms" is the median of its burst medians. All of
them are timed within the same seconds of the same process, so a slow
moment of a shared machine falls on every contender alike, and the ratios
between them are the side-by-side numbers.

The bandwidth yardstick (--stream LIB.so:SYMBOL --stream-elements N, with
--interleave-rounds): the STREAM triad of axon's probe, compiled by
`axon bench` (codegen/cpu/stream_triad.h), over three page-aligned buffers
of N floats. It is checked (a = b + 3 c), timed, and then takes its turn in
every interleaved round as one more contender, "stream", so that a
contender's bandwidth fraction can be taken against the rate the machine
gave the triad in the same round, not against a probe run minutes apart
(this VM's probe read 27.6 to 54.4 GB/s within one run). Its row reports
GB/s as 12 N bytes per call (two reads and one write per element, as the
probe counts them) over the median of its burst medians, and per burst.

Writes one JSON object (stdout, or --out):
    {"entry": ..., "numpy_output_dtypes": [...], "peers": {NAME: {"status": "ok" |
     "not installed" | "failed: ..." | "wrong result: ...", "median_ms", "min_ms",
     "max_ms", "reps", "copies", "compile_s", "max_error_over_budget", "max_diff_vs_numpy",
     "made_dense", "interleaved_ms", "burst_ms"}},
     "kernels": {NAME: {the same fields, no compile_s}}, "interleave": {"rounds", "burst_seconds", "order"},
     "stream": {"status", "elements", "bytes_per_call", "median_ms", ..., "interleaved_ms", "burst_ms",
                "gbs", "burst_gbs"} (with --stream),
     "cpus": [the CPUs this process may run on]}
"""
import argparse
import builtins
import ctypes
import inspect
import json
import math
import os
import re
import statistics
import sys
import time
import traceback
import types

import numpy as np

ALL_PEERS = ["numpy", "torch", "torch.compile", "jax", "torch.sdpa"]
NOT_APPLICABLE = "not applicable"
DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "bool": np.bool_}


# --- loading the spec under a chosen `numpy` --------------------------------

def load_entry(path, entry, numpy_module):
    """Executes the spec with `import numpy` bound to `numpy_module`; returns the entry function."""
    real_import = builtins.__import__

    def spec_import(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "numpy" or name.startswith("numpy."):
            return numpy_module
        return real_import(name, globals, locals, fromlist, level)

    spec_builtins = dict(vars(builtins))
    spec_builtins["__import__"] = spec_import
    namespace = {"__builtins__": spec_builtins, "__name__": "axon_spec", "__file__": path}
    with open(path) as f:
        code = compile(f.read(), path, "exec")
    exec(code, namespace)
    functions = [v for v in namespace.values() if inspect.isfunction(v) and v.__code__.co_filename == path]
    if entry:
        for fn in functions:
            if fn.__name__ == entry:
                return fn
        raise SystemExit(f"peers.py: {path}: no function named {entry!r}")
    best = None
    for fn in functions:  # the last fully annotated function, as axon chooses
        params = list(inspect.signature(fn).parameters.values())
        if params and all(p.annotation is not inspect.Parameter.empty for p in params):
            best = fn
    if best is None:
        raise SystemExit(f"peers.py: {path}: no function with every parameter annotated")
    return best


def param_dtypes(fn):
    out = []
    for p in inspect.signature(fn).parameters.values():
        m = re.fullmatch(r"\s*(\w+)\[.*\]\s*", str(p.annotation))
        out.append(DTYPES.get(m.group(1), np.float32) if m else np.float32)
    return out


# --- the torch shim ---------------------------------------------------------

def numpy_tensor_methods(torch):
    """Gives torch tensors numpy's forms of the ndarray methods whose torch
    namesakes differ: x.transpose(*axes) or x.transpose(axes) permutes (torch's
    transpose swaps two dims; two ints still do, as numpy's does on a 2-d
    array) and x.T reverses every axis. Idempotent; torch's own two-dim calls
    are unchanged."""
    swap = torch.Tensor.transpose
    if getattr(swap, "axon_numpy_form", False):
        return

    def transpose(self, *axes, **kwargs):
        if kwargs or (len(axes) == 2 and all(isinstance(a, int) for a in axes)):
            return swap(self, *axes, **kwargs)
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if not axes or axes == (None,):
            axes = tuple(reversed(range(self.dim())))
        return self.permute(*axes)
    transpose.axon_numpy_form = True
    torch.Tensor.transpose = transpose
    torch.Tensor.T = property(lambda self: self.permute(*reversed(range(self.dim()))))


class TorchNumpy(types.ModuleType):
    """The part of numpy's namespace the workloads use, on torch tensors.

    Python scalars (shapes, constants) stay Python numbers, computed with
    `math`, so they combine with float32 tensors as weak scalars, as a torch
    user would write them.
    """

    def __init__(self, torch):
        super().__init__("numpy")
        t = self.t = torch
        numpy_tensor_methods(torch)
        self.float32, self.float64, self.int32, self.int64 = t.float32, t.float64, t.int32, t.int64
        self.bool_ = t.bool
        self.inf, self.pi, self.e, self.newaxis = math.inf, math.pi, math.e, None
        for name, scalar in [("exp", math.exp), ("log", math.log), ("sqrt", math.sqrt), ("tanh", math.tanh),
                             ("sin", math.sin), ("cos", math.cos), ("abs", abs), ("absolute", abs),
                             ("log1p", math.log1p), ("expm1", math.expm1), ("floor", math.floor),
                             ("ceil", math.ceil)]:
            setattr(self, name, self._unary(getattr(t, name), scalar))
        self.negative = lambda x: -x
        self.square = lambda x: x * x
        self.reciprocal = lambda x: 1.0 / x
        self.matmul = t.matmul
        self.einsum = t.einsum
        self.swapaxes = t.swapaxes
        self.reshape = lambda x, shape: t.reshape(x, (shape,) if isinstance(shape, int) else tuple(shape))
        self.ascontiguousarray = lambda x: x.contiguous()
        self.asarray = lambda x, dtype=None: t.as_tensor(x, dtype=self._dtype(dtype))
        self.expand_dims = lambda x, axis: t.unsqueeze(x, axis)
        self.squeeze = lambda x, axis=None: t.squeeze(x) if axis is None else t.squeeze(x, axis)
        self.concatenate = lambda xs, axis=0: t.cat(list(xs), dim=axis)
        self.stack = lambda xs, axis=0: t.stack(list(xs), dim=axis)
        self.triu = lambda x, k=0: t.triu(x, diagonal=k)
        self.tril = lambda x, k=0: t.tril(x, diagonal=k)
        self.where = lambda c, a, b: t.where(c, a, b)
        self.sum = self._reduce(t.sum)
        self.mean = self._reduce(t.mean)
        self.max = self.amax = self._reduce(t.amax)
        self.min = self.amin = self._reduce(t.amin)
        self.var = self._moment(squared=True)
        self.std = self._moment(squared=False)
        self.maximum = lambda a, b: t.maximum(*self._tensors(a, b))
        self.minimum = lambda a, b: t.minimum(*self._tensors(a, b))

    def _dtype(self, d):
        table = {None: None, float: self.t.float64, int: self.t.int64, bool: self.t.bool}
        if d in table:
            return table[d]
        if isinstance(d, self.t.dtype):
            return d
        return {np.float32: self.t.float32, np.float64: self.t.float64, np.int32: self.t.int32,
                np.int64: self.t.int64, np.bool_: self.t.bool}[np.dtype(d).type]

    def _unary(self, tensor_fn, scalar_fn):
        def f(x):
            return tensor_fn(x) if isinstance(x, self.t.Tensor) else scalar_fn(x)
        return f

    def _reduce(self, fn):
        def f(x, axis=None, keepdims=False):
            if axis is None:
                r = fn(x)
                return r.reshape((1,) * x.dim()) if keepdims else r
            return fn(x, dim=axis, keepdim=keepdims)
        return f

    def _moment(self, squared):
        """np.var (squared) or np.std over `axis` (None: every axis), with numpy's ddof."""
        fn = self.t.var if squared else self.t.std

        def f(x, axis=None, keepdims=False, ddof=0):
            dims = tuple(range(x.dim())) if axis is None else axis
            return fn(x, dim=dims, correction=ddof, keepdim=keepdims)
        return f

    def clip(self, x, a_min, a_max):
        return self.t.clamp(x, a_min, a_max)

    def _tensors(self, a, b):
        if not isinstance(a, self.t.Tensor):
            a = self.t.as_tensor(a, dtype=b.dtype)
        if not isinstance(b, self.t.Tensor):
            b = self.t.as_tensor(b, dtype=a.dtype)
        return a, b

    def split(self, x, sections, axis=0):
        if isinstance(sections, int):
            return list(self.t.tensor_split(x, sections, dim=axis))
        return list(self.t.tensor_split(x, list(sections), dim=axis))

    def transpose(self, x, axes=None):
        return x.permute(*(axes if axes is not None else reversed(range(x.dim()))))

    def ones(self, shape, dtype=float):
        return self.t.ones(shape, dtype=self._dtype(dtype))

    def zeros(self, shape, dtype=float):
        return self.t.zeros(shape, dtype=self._dtype(dtype))

    def full(self, shape, value, dtype=None):
        return self.t.full(shape if not isinstance(shape, int) else (shape,), value, dtype=self._dtype(dtype))

    def arange(self, *args, dtype=None):
        return self.t.arange(*args, dtype=self._dtype(dtype))


def jax_numpy(jnp):
    """jax.numpy is numpy's API already; only the calls it lacks are added."""
    shim = types.ModuleType("numpy")
    shim.__dict__.update({k: getattr(jnp, k) for k in dir(jnp) if not k.startswith("__")})
    shim.ascontiguousarray = jnp.asarray  # XLA materialises every output anyway
    return shim


# --- running and checking ---------------------------------------------------

def time_call(fn, warmup=2, min_reps=5, min_seconds=0.2):
    t0 = time.perf_counter()
    for _ in range(warmup):
        fn()
    compile_s = time.perf_counter() - t0
    samples = []
    start = time.perf_counter()
    while len(samples) < min_reps or time.perf_counter() - start < min_seconds:
        t1 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t1) * 1e3)
    return {"median_ms": statistics.median(samples), "min_ms": min(samples), "max_ms": max(samples),
            "reps": len(samples), "compile_s": compile_s}


def as_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def compare(got, want, bounds, reference):
    """(ok, detail): `got` against numpy's outputs `want` (see the module docstring)."""
    if len(got) != len(want):
        return False, f"{len(got)} outputs, numpy gives {len(want)}", {}
    stats = {"max_diff_vs_numpy": 0.0}
    for i, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g, dtype=np.float64)
        w = np.asarray(w, dtype=np.float64)
        if g.shape != w.shape:
            return False, f"output {i} has shape {g.shape}, numpy's {w.shape}", stats
        diff = np.abs(g - w)
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        diff = np.where(same, 0.0, diff)
        if bounds:
            allowed = 2.0 * np.asarray(bounds[i], dtype=np.float64).reshape(w.shape)
        else:
            finite = np.abs(w[np.isfinite(w)])
            allowed = np.full(w.shape, 1e-3 * (finite.max() if finite.size else 1.0) + 1e-6)
        if diff.size:
            stats["max_diff_vs_numpy"] = max(stats["max_diff_vs_numpy"], float(np.nanmax(np.where(np.isnan(diff), np.inf, diff))))
        if reference:
            r = np.asarray(reference[i], dtype=np.float64).reshape(w.shape)
            b = np.asarray(bounds[i], dtype=np.float64).reshape(w.shape) if bounds else None
            if b is not None:
                err = np.where((g == r) | (np.isnan(g) & np.isnan(r)), 0.0, np.abs(g - r))
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = np.where(err == 0, 0.0, err / b)
                worst = float(np.nanmax(np.where(np.isnan(ratio), np.inf, ratio))) if ratio.size else 0.0
                stats["max_error_over_budget"] = max(stats.get("max_error_over_budget", 0.0), worst)
        bad = ~(diff <= allowed)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            idx = np.unravel_index(k, w.shape)
            return False, (f"output {i}{list(idx)}: {g.flat[k]:.9g}, numpy {w.flat[k]:.9g} "
                           f"(allowed difference {allowed.flat[k]:.3g}; {int(bad.sum())} elements differ)"), stats
    return True, "", stats


def first_line(e):
    text = f"{type(e).__name__}: {e}".strip().splitlines()
    return text[0][:200] if text else type(e).__name__


class NotApplicable(Exception):
    """The peer has no form of this program (torch.sdpa on a program that is not attention)."""


class Rotation:
    """Cycles through `copies` argument sets: next() is the set for the next call."""

    def __init__(self, make_args, copies):
        self.sets = [make_args() for _ in range(max(1, copies))]
        self.i = 0

    def next(self):
        args = self.sets[self.i % len(self.sets)]
        self.i += 1
        return args


def make_runner(peer, spec, entry, inputs, dtypes, copies=1):
    """Two zero-argument callables: the outputs as numpy arrays (on the first
    argument set), and the timed call (cycling through `copies` argument sets)."""
    if peer == "numpy":
        fn = load_entry(spec, entry, np)
        rot = Rotation(lambda: [np.array(a, dtype=d, copy=True) for a, d in zip(inputs, dtypes)], copies)
        first = rot.sets[0]
        call = lambda: fn(*rot.next())  # noqa: E731
        return (lambda: [np.asarray(o) for o in as_list(fn(*first))]), call
    if peer in ("torch", "torch.compile", "torch.sdpa"):
        import torch
        if peer == "torch.sdpa":
            import torch_sdpa
            name = load_entry(spec, entry, np).__name__
            fn = torch_sdpa.forms(torch).get(name)
            if fn is None:
                raise NotApplicable(f"{name} has no scaled_dot_product_attention form (bench/harness/torch_sdpa.py)")
        else:
            fn = load_entry(spec, entry, TorchNumpy(torch))
        if peer == "torch.compile":
            fn = torch.compile(fn)
        rot = Rotation(lambda: [torch.from_numpy(np.array(a, dtype=d, copy=True)) for a, d in zip(inputs, dtypes)],
                       copies)
        first = rot.sets[0]

        def run(args):
            with torch.no_grad():
                return fn(*args)
        return (lambda: [o.detach().cpu().numpy() for o in as_list(run(first))]), (lambda: run(rot.next()))
    if peer == "jax":
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_platforms", "cpu")
        fn = jax.jit(load_entry(spec, entry, jax_numpy(jnp)))
        rot = Rotation(lambda: [jax.device_put(np.array(a, dtype=d, copy=True)) for a, d in zip(inputs, dtypes)],
                       copies)
        first = rot.sets[0]
        call = lambda: jax.block_until_ready(fn(*rot.next()))  # noqa: E731
        return (lambda: [np.asarray(o) for o in as_list(jax.block_until_ready(fn(*first)))]), call
    raise SystemExit(f"peers.py: unknown peer {peer!r} (known: {', '.join(ALL_PEERS)})")


def views_among(outputs):
    """The indices of the outputs (as make_runner's first callable returns
    them) that are not dense row-major arrays: a view a peer returned, such
    as numpy's or torch's transpose, whose elements nobody has moved yet."""
    return [i for i, o in enumerate(outputs) if isinstance(o, np.ndarray) and not o.flags.c_contiguous]


def made_dense(peer, call, which):
    """The timed call of `peer`, followed by a copy of each output in `which`
    to a dense row-major array, the layout axon's kernels write. Without it a
    peer that answers with a view is timed doing none of the work (numpy's
    np.transpose returns in microseconds what axon's kernel spends a pass over
    memory on); with it, every contender is timed producing the same result.
    jax's outputs are always dense (XLA materialises them), so its call is
    returned unchanged, as is any call with no view among its outputs."""
    if not which or peer == "jax":
        return call
    if peer == "numpy":
        dense = np.ascontiguousarray
    else:
        dense = lambda t: t.contiguous()  # noqa: E731 - torch, torch.compile, torch.sdpa

    def run():
        outs = as_list(call())
        return [dense(o) if i in which else o for i, o in enumerate(outs)]
    return run


def placed_empty(shape, dtype, offset):
    """An uninitialised dense array whose data starts `offset` bytes past a 4096-byte boundary."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    raw = np.empty(nbytes + 4096 + offset, dtype=np.uint8)
    off = (-raw.ctypes.data) % 4096 + offset
    return raw[off:off + nbytes].view(dtype).reshape(shape)


def placed_array(a, offset):
    """A dense copy of `a` whose data starts `offset` bytes past a 4096-byte boundary
    (a 0-d `a` stays 0-d: np.ascontiguousarray would make it 1-d)."""
    a = np.asarray(a, order="C")
    out = placed_empty(a.shape, a.dtype, offset)
    out[...] = a
    return out


def make_kernel_runner(lib_path, symbol, inputs, dtypes, out_shapes, out_dtypes, copies=1, offset=0):
    """As make_runner, for a compiled kernel with axon's C ABI: `void f(const T* in..., T* out...)`,
    every buffer dense row-major, caller-allocated and starting `offset` bytes past a page
    boundary (0: aligned as torch's and XLA's allocators and axon's runtime align, to 64 bytes
    or more; numpy's large arrays start 16 bytes past one)."""
    fn = getattr(ctypes.CDLL(os.path.abspath(lib_path)), symbol)
    fn.restype = None

    # One output set for every call, as the peers' allocators hand the same
    # block back call after call: inputs rotate cold, outputs are reused.
    outs = [placed_array(np.zeros(sh, dtype=d), offset) for sh, d in zip(out_shapes, out_dtypes)]

    def make_args():
        ins = [placed_array(np.asarray(a, dtype=d), offset) for a, d in zip(inputs, dtypes)]
        return ins, outs, [ctypes.c_void_p(a.ctypes.data) for a in ins + outs]

    rot = Rotation(make_args, copies)
    first = rot.sets[0]

    def outputs():
        for o in first[1]:
            o.fill(np.nan)  # a kernel that skips an element cannot pass on a previous call's value
        fn(*first[2])
        return [o.copy() for o in first[1]]
    return outputs, (lambda: fn(*rot.next()[2]))


STREAM = "stream"  # the contender name of --stream


def make_stream_runner(lib_path, symbol, n):
    """The bandwidth yardstick of --stream: `void f(float* a, const float* b, const float* c,
    int64_t n)`, the STREAM triad a = b + 3 c that axon's probe runs, over three page-aligned
    buffers of n floats (the probe's length). Returns (check, call): check() runs it once and
    says whether every element of a is 1 + 3 * 2."""
    fn = getattr(ctypes.CDLL(os.path.abspath(lib_path)), symbol)
    fn.restype = None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    a, b, c = (placed_empty((n,), np.float32, 0) for _ in range(3))
    a.fill(np.nan)
    b.fill(1.0)
    c.fill(2.0)
    args = (a.ctypes.data, b.ctypes.data, c.ctypes.data, n)

    def call():
        fn(*args)
        return a, b, c  # the kernel gets only addresses: this keeps the arrays alive as long as `call`

    def check():
        call()
        return bool(np.all(a == 7.0))
    return check, call


def run_stream(args, timed_calls):
    """Checks and times the --stream triad; it joins `timed_calls` when it computed a = b + 3 c."""
    m = re.fullmatch(r"(.+):(\w+)", args.stream)
    row = {"elements": args.stream_elements, "bytes_per_call": 12 * args.stream_elements}
    try:
        if not m:
            raise RuntimeError(f"--stream {args.stream!r}: expected LIB.so:SYMBOL")
        check, call = make_stream_runner(m.group(1), m.group(2), args.stream_elements)
        if not check():
            row["status"] = "wrong result: a != b + 3 c"
        else:
            row.update(time_call(call, min_seconds=args.min_seconds))
            row.pop("compile_s", None)
            row["status"] = "ok"
            timed_calls[STREAM] = call
    except Exception as e:  # noqa: BLE001 - reported, like a peer's failure
        row["status"] = "failed: " + first_line(e)
    print(f"peers: {STREAM}: {row.get('status')}" +
          (f", {row['median_ms']:.3f} ms" if "median_ms" in row else ""), file=sys.stderr)
    return row


def interleave(calls, rounds, burst_seconds, gap_seconds=0.0):
    """{name: (median of burst medians, [burst medians])}: `rounds` rounds of one burst per
    contender, in an order rotated by one each round, each burst after `gap_seconds` of
    sleep (see the module docstring)."""
    names = list(calls)
    bursts = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            time.sleep(gap_seconds)
            samples = []
            start = time.perf_counter()
            while len(samples) < 3 or time.perf_counter() - start < burst_seconds:
                t1 = time.perf_counter()
                calls[n]()
                samples.append((time.perf_counter() - t1) * 1e3)
            bursts[n].append(statistics.median(samples))
    return {n: (statistics.median(b), b) for n, b in bursts.items()}


MAX_COPIES = 4096


def copies_for(rotate_bytes, inputs, dtypes, outputs):
    """The fewest argument sets (at least 2) whose inputs plus one output set each reach rotate_bytes."""
    if rotate_bytes <= 0:
        return 1
    per_set = sum(a.size * np.dtype(d).itemsize for a, d in zip(inputs, dtypes))
    per_set += sum(np.asarray(o).nbytes for o in outputs or [])
    return int(min(MAX_COPIES, max(2, math.ceil(rotate_bytes / max(per_set, 1)))))


def is_installed(peer):
    hidden = [p.strip() for p in os.environ.get("AXON_PEERS_HIDE", "").split(",") if p.strip()]
    if peer in hidden or (peer in ("torch.compile", "torch.sdpa") and "torch" in hidden):
        return False, ""
    module = {"numpy": "numpy", "torch": "torch", "torch.compile": "torch", "torch.sdpa": "torch",
              "jax": "jax"}.get(peer, peer)
    try:
        __import__(module)
        return True, ""
    except ImportError:
        return False, ""
    except Exception as e:  # noqa: BLE001 - a broken install is a failure, not an absence
        return True, first_line(e)


def run_kernels(args, kernels, inputs, dtypes, numpy_out, bounds, reference, timed_calls):
    """Checks and times each --kernel as a peer is; the ones that pass join `timed_calls`."""
    rows = {}
    out_dtypes = [DTYPES.get(d.strip(), np.float32) for d in args.kernel_output_dtypes.split(",") if d.strip()]
    for name, lib, symbol in kernels:
        row = {}
        try:
            if numpy_out is None:
                raise RuntimeError("numpy failed, so there is nothing to check against")
            shapes = [np.asarray(o).shape for o in numpy_out]
            odt = out_dtypes or [np.float32] * len(shapes)
            if len(odt) != len(shapes):
                raise RuntimeError(f"{len(odt)} output dtypes for {len(shapes)} outputs")
            copies = copies_for(args.rotate_bytes, inputs, dtypes, numpy_out)  # the peers' rotation
            outputs, call = make_kernel_runner(lib, symbol, inputs, dtypes, shapes, odt, copies, args.kernel_offset)
            ok, detail, stats = compare(outputs(), numpy_out, bounds, reference)
            row.update(stats)
            if not ok:
                row["status"] = "wrong result: " + detail
            else:
                row.update(time_call(call, min_seconds=args.min_seconds))
                row.pop("compile_s", None)
                row["copies"] = copies
                row["status"] = "ok"
                timed_calls[name] = call
        except Exception as e:  # noqa: BLE001 - reported, like a peer's failure
            row["status"] = "failed: " + first_line(e)
        rows[name] = row
        print(f"peers: kernel {name}: {row.get('status')}" +
              (f", {row['median_ms']:.3f} ms" if "median_ms" in row else ""), file=sys.stderr)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", required=True)
    ap.add_argument("--entry", default="")
    ap.add_argument("-D", "--define", action="append", default=[], help="recorded; shapes come from the inputs")
    ap.add_argument("--inputs", nargs="*", default=[])
    ap.add_argument("--reference", nargs="*", default=[])
    ap.add_argument("--bound", nargs="*", default=[])
    ap.add_argument("--peers", default=",".join(ALL_PEERS))
    ap.add_argument("--min-seconds", type=float, default=0.2)
    ap.add_argument("--rotate-bytes", type=float, default=0,
                    help="cold inputs: rotate argument copies whose bytes reach this (0: one set)")
    ap.add_argument("--kernel", action="append", default=[], metavar="NAME=LIB.so:SYMBOL",
                    help="a compiled kernel (axon's C ABI) to check and to time between the peers")
    ap.add_argument("--kernel-output-dtypes", default="",
                    help="comma list of the kernels' output dtypes (f32, f64, ...; default f32)")
    ap.add_argument("--kernel-offset", type=int, default=0,
                    help="every --kernel buffer starts this many bytes past a 4096-byte boundary "
                         "(default 0; numpy's large arrays start 16 past one)")
    ap.add_argument("--interleave-rounds", type=int, default=0,
                    help="rounds of interleaved bursts of every contender that passed (0: none)")
    ap.add_argument("--burst-seconds", type=float, default=0.03)
    ap.add_argument("--burst-gap", type=float, default=0.15,
                    help="seconds of sleep before each burst, for the previous contender's worker threads to park")
    ap.add_argument("--stream", default="", metavar="LIB.so:SYMBOL",
                    help="the STREAM triad kernel, timed in the interleaved rounds as the bandwidth yardstick")
    ap.add_argument("--stream-elements", type=int, default=16 << 20,
                    help="floats in each of the triad's three buffers (axon passes its probe's length)")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.stream and args.stream_elements <= 0:
        raise SystemExit(f"peers.py: --stream-elements {args.stream_elements}: expected a positive count")
    if args.kernel_offset < 0 or args.kernel_offset >= 4096 or args.kernel_offset % 8:
        raise SystemExit(f"peers.py: --kernel-offset {args.kernel_offset}: expected a multiple of 8 in [0, 4096)")
    kernels = []
    for k in args.kernel:
        m = re.fullmatch(r"([^=]+)=(.+):(\w+)", k)
        if not m:
            raise SystemExit(f"peers.py: --kernel {k!r}: expected NAME=LIB.so:SYMBOL")
        if m.group(1) in ALL_PEERS or m.group(1) == STREAM:
            what = "the name of --stream" if m.group(1) == STREAM else "a peer's name"
            raise SystemExit(f"peers.py: --kernel {k!r}: {m.group(1)!r} is {what}")
        kernels.append(m.groups())

    inputs = [np.load(p) for p in args.inputs]
    reference = [np.load(p) for p in args.reference]
    bounds = [np.load(p) for p in args.bound]
    entry_fn = load_entry(args.spec, args.entry, np)
    dtypes = param_dtypes(entry_fn)
    if len(dtypes) != len(inputs):
        raise SystemExit(f"peers.py: {args.spec}: the entry takes {len(dtypes)} parameters, got {len(inputs)} inputs")

    result = {"spec": args.spec, "entry": entry_fn.__name__, "defines": args.define,
              "rotate_bytes": args.rotate_bytes, "cpus": sorted(os.sched_getaffinity(0)), "peers": {}}
    numpy_out = None
    timed_calls = {}  # contenders that passed their check, for the interleaved rounds
    peers = [p for p in args.peers.split(",") if p]
    # numpy runs first: the others are checked against it (untimed when not asked for).
    untimed_numpy = "numpy" not in peers
    peers = ["numpy"] + [p for p in peers if p != "numpy"]
    for peer in peers:
        row = {}
        installed, broken = is_installed(peer)
        if peer not in ALL_PEERS:
            row["status"] = f"unknown peer (known: {', '.join(ALL_PEERS)})"
        elif not installed:
            row["status"] = "not installed"
        elif broken:
            row["status"] = "failed: " + broken
        else:
            try:
                # numpy's outputs size the rotation, so numpy itself first runs on one set.
                copies = copies_for(args.rotate_bytes, inputs, dtypes, numpy_out) if peer != "numpy" else 1
                outputs, call = make_runner(peer, args.spec, args.entry, inputs, dtypes, copies)
                got = outputs()
                if peer == "numpy" and not untimed_numpy and args.rotate_bytes > 0:
                    copies = copies_for(args.rotate_bytes, inputs, dtypes, got)
                    outputs, call = make_runner(peer, args.spec, args.entry, inputs, dtypes, copies)
                if peer == "numpy":
                    numpy_out = got
                    result["numpy_output_dtypes"] = [str(o.dtype) for o in got]
                    ok, detail, stats = compare(got, got, bounds, reference)
                else:
                    if numpy_out is None:
                        raise RuntimeError("numpy failed, so there is nothing to check against")
                    ok, detail, stats = compare(got, numpy_out, bounds, reference)
                row.update(stats)
                if not ok:
                    row["status"] = "wrong result: " + detail
                elif peer == "numpy" and untimed_numpy:
                    row["status"] = "ok (not timed)"
                else:
                    views = views_among(got)
                    if views and peer != "jax":
                        row["made_dense"] = views
                        call = made_dense(peer, call, views)
                    row.update(time_call(call, min_seconds=args.min_seconds))
                    row["copies"] = copies
                    row["status"] = "ok"
                    timed_calls[peer] = call
            except SystemExit:
                raise
            except NotApplicable as e:
                row["status"] = f"{NOT_APPLICABLE}: {e}"
            except Exception as e:  # noqa: BLE001 - every failure is reported in the table
                row["status"] = "failed: " + first_line(e)
                if os.environ.get("AXON_PEERS_TRACEBACK"):
                    traceback.print_exc()
        result["peers"][peer] = row
        print(f"peers: {peer}: {row.get('status')}" +
              (f", {row['median_ms']:.3f} ms" if "median_ms" in row else ""), file=sys.stderr)
        if untimed_numpy and peer == "numpy":
            continue
    if kernels:
        result["kernels"] = run_kernels(args, kernels, inputs, dtypes, numpy_out, bounds, reference, timed_calls)
    if args.stream and args.interleave_rounds > 0 and len(timed_calls) > 0:
        result[STREAM] = run_stream(args, timed_calls)
    if args.interleave_rounds > 0 and len(timed_calls) > 0:
        order = list(timed_calls)
        result["interleave"] = {"rounds": args.interleave_rounds, "burst_seconds": args.burst_seconds,
                                "burst_gap": args.burst_gap,
                                "order": order}
        print(f"peers: interleaving {', '.join(order)}, {args.interleave_rounds} rounds", file=sys.stderr)
        for name, (ms, bursts) in interleave(timed_calls, args.interleave_rounds, args.burst_seconds, args.burst_gap).items():
            if name == STREAM:
                row = result[STREAM]
                row["gbs"] = row["bytes_per_call"] / (ms * 1e6)
                row["burst_gbs"] = [row["bytes_per_call"] / (b * 1e6) for b in bursts]
            else:
                row = result["kernels"][name] if name in result.get("kernels", {}) else result["peers"][name]
            row["interleaved_ms"] = ms
            row["burst_ms"] = bursts
    text = json.dumps(result, indent=2)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
