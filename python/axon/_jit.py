"""@axon.jit and axon.optimize: a spec's kernels, searched once per signature.

A JitFunction holds one function's spec (read from its source at the first
call, see _spec.py). A call first goes to the extension's Dispatcher, which
serves arguments whose dtypes and shapes match a kernel already loaded,
without a copy and without leaving C++ but for the result. Otherwise the
call takes the slow path once per new signature: the arguments' shapes
bind the named dims (_args.py), the spec is parsed for them, optimize()
searches (or answers from the tuning database, which is what makes a second
process fast), the kernel is compiled and loaded, and the Dispatcher gets it.

`stats` counts what the slow path did: "optimized" (calls of the optimizer,
one per signature), "searched" (those the database could not answer),
"answered_from_db", and "kernels" (loaded).
"""

import functools
import json
import sys
import threading
from . import _axon
from ._args import Param, bind_shapes, prepare
from ._spec import from_function
from .errors import SearchWarning, SpecError, warn


class Options:
    """The search's settings: axon optimize's flags."""

    def __init__(self, budget=30.0, trials=0, seed=1, db=None, rewrites=True, resume=False, progress=None):
        self.budget = float(budget)
        self.trials = int(trials)
        self.seed = int(seed)
        self.db = db          # None: the default database ($AXON_DB, ~/.cache/axon); False: none; else a path
        self.rewrites = bool(rewrites)
        self.resume = bool(resume)
        self.progress = progress  # None: when stderr is a terminal

    def search(self, program):
        progress = self.progress
        if progress is None:
            try:
                progress = sys.stderr.isatty()
            except (AttributeError, ValueError):
                progress = False
        use_db = self.db is not False
        db = "" if self.db in (None, False) else str(self.db)
        main = threading.current_thread() is threading.main_thread()
        r = _axon.search(program, self.budget, self.trials, self.seed, db, use_db, self.resume, self.rewrites,
                         bool(progress), main)
        for w in r["warnings"]:
            warn(w, SearchWarning)
        if r["interrupted"]:
            warn("the search was interrupted; using the best kernel it found so far", SearchWarning)
        return r


class Compiled:
    """One kernel for one signature: call it like the function; report, source, header, signature."""

    def __init__(self, program, result):
        self.program = program
        self._result = result
        self.kernel = _axon.Kernel(program, result)

    def __call__(self, *args):
        return self.kernel(*args)

    @property
    def report(self):
        return json.loads(self._result["report"])

    @property
    def source(self):
        return self._result["source"]

    @property
    def header(self):
        return self._result["header"]

    @property
    def from_db(self):
        return self._result["from_db"]

    @property
    def signature(self):
        return {"entry": self.program.entry,
                "params": [(n, f"{d}{list(s)}") for n, d, s in self.program.params],
                "outputs": [f"{d}{list(s)}" for d, s in self.program.outputs]}


class JitFunction:
    def __init__(self, fn, options):
        functools.update_wrapper(self, fn)
        self.__axon_function__ = fn
        self.options = options
        self._miss = object()
        self._dispatch = _axon.Dispatcher(self._miss)
        self._lock = threading.RLock()
        self._spec = None
        self._params = None
        self._compiled = {}  # sorted dims items -> Compiled
        self.stats = {"optimized": 0, "searched": 0, "answered_from_db": 0, "kernels": 0}

    def __call__(self, *args):
        r = self._dispatch(*args)
        if r is not self._miss:
            return r
        arrays, compiled = self._bind(args)
        r = self._dispatch(*arrays)
        if r is self._miss:
            return compiled(*arrays)  # raises ShapeError saying what does not fit
        return r

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    # The spec, read once.
    def spec(self):
        if self._spec is None:
            self._spec = from_function(self.__axon_function__)
        return self._spec

    def params(self):
        if self._params is None:
            spec = self.spec()
            if any(a is None for _, a in spec.params):
                self.program({})  # the frontend's own message for the missing annotation
                raise SpecError(f"{spec.path}: every parameter of '{spec.entry}' needs a string annotation such "
                                f"as \"f32[M, 64]\"")
            self._params = [Param(n, a, f"{spec.path}: parameter '{n}' of {spec.entry}") for n, a in spec.params]
        return self._params

    def program(self, dims):
        s = self.spec()
        return _axon.parse_text_spec(s.path, s.text, s.entry, dims, s.line_map)

    def compiled(self, dims):
        """The Compiled kernel for the named dims `dims`, searched for on first use."""
        key = tuple(sorted(dims.items()))
        c = self._compiled.get(key)
        if c is not None:
            return c
        with self._lock:
            c = self._compiled.get(key)
            if c is None:
                program = self.program(dict(dims))
                result = self.options.search(program)
                self.stats["optimized"] += 1
                self.stats["answered_from_db" if result["from_db"] else "searched"] += 1
                c = Compiled(program, result)
                self._dispatch.add(c.kernel)
                self.stats["kernels"] += 1
                self._compiled[key] = c
        return c

    def _bind(self, args):
        arrays, dims = prepare(args, self.params())
        return arrays, self.compiled(dims)

    def _for(self, args, dims):
        if args and dims:
            raise TypeError("give either arguments or named dims, not both")
        if args:
            return self._bind(args)[1]
        self.params()
        return self.compiled(dims)

    def report(self, *args, **dims):
        """report.json of the kernel for these arguments (or named dims, report(M=64)), as a dict."""
        return self._for(args, dims).report

    def source(self, *args, **dims):
        """The kernel's C++ (kernel.cpp) for these arguments or named dims."""
        return self._for(args, dims).source

    def header(self, *args, **dims):
        """The kernel's C ABI (kernel.h) for these arguments or named dims."""
        return self._for(args, dims).header

    def kernel(self, *args, **dims):
        """The Compiled kernel for these arguments or named dims."""
        return self._for(args, dims)

    def output_types(self, *shapes_and_dtypes):
        """[(dtype, shape)] of the outputs for parameters of these (shape, dtype) pairs, without a search."""
        params = self.params()
        dims = {}
        for (shape, _), p in zip(shapes_and_dtypes, params):
            for n, name in zip(shape, p.names):
                if name:
                    dims.setdefault(name, int(n))
        return self.program(dims).outputs


def jit(fn=None, *, budget=30.0, trials=0, seed=1, db=None, rewrites=True, resume=False, progress=None):
    """@axon.jit or @axon.jit(budget=..., ...): the function's numpy body is the spec."""
    options = Options(budget, trials, seed, db, rewrites, resume, progress)
    if fn is None:
        return lambda f: JitFunction(f, options)
    return JitFunction(fn, options)


def optimize(spec, shapes=None, *, entry=None, budget=30.0, trials=0, seed=1, db=None, rewrites=True,
             resume=False, progress=None):
    """The explicit form: a Compiled kernel for a spec file or a function and its shapes.

    spec: a path to a spec file, or a function (or @axon.jit function).
    shapes: the named dims, {"M": 64}; for a function also one shape per
    parameter, [(64, 4096), (4096,)].
    """
    options = Options(budget, trials, seed, db, rewrites, resume, progress)
    if isinstance(spec, JitFunction):
        spec = spec.__axon_function__
    if callable(spec):
        jf = JitFunction(spec, options)
        params = jf.params()
        if shapes is None:
            shapes = {}
        if isinstance(shapes, dict):
            dims = {str(k): int(v) for k, v in shapes.items()}
        else:
            dims = bind_shapes(shapes, params)
        return jf.compiled(dims)
    dims = {str(k): int(v) for k, v in (shapes or {}).items()}
    program = _axon.load_file_spec(str(spec), entry or "", dims)
    return Compiled(program, options.search(program))
