"""A Python function as a spec: the text the frontend parses.

The spec of `@axon.jit def f(...)` is f's own source plus what it uses from
its module, assembled the way a spec file would hold them:

- the numpy module under the names f's code uses for it (`import numpy as
  np`), and numpy functions imported by name (`from numpy import exp`);
- module constants of type int, float or bool (`EPS = 1e-05`), and the
  constants a nested function closes over;
- the helper functions of the same module that f calls, and the helpers
  they call (the frontend inlines them, as it does in a spec file).

Decorator lines are left out and nested functions are dedented. Every line
taken from a file keeps its (line, column shift) in `line_map`, so that the
frontend's diagnostics are reported at the function's real file:line:col
with that file's line under the caret.
"""

import ast
import inspect
import types

import numpy

from .errors import SpecError


class SpecSource:
    """path, text, entry, line_map, and params: [(name, annotation text or None)]."""

    def __init__(self, path, text, entry, line_map, params):
        self.path = path
        self.text = text
        self.entry = entry
        self.line_map = line_map
        self.params = params


def _names(code):
    """The global names a code object and its nested code objects load."""
    out = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out += _names(c)
    return out


def _unwrap(obj):
    inner = getattr(obj, "__axon_function__", None)
    return inner if inner is not None else obj


def _function_lines(fn):
    """The lines of fn's def (decorators left out), dedented, with their file lines and shift."""
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise SpecError(f"axon needs the source of '{fn.__qualname__}' to use it as a spec, and Python has none "
                        f"({e}); define it in a file") from None
    if start == 0:
        start = 1
    def_at = 0
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith("def ") or stripped.startswith("async def "):
            def_at = i
            break
    lines = lines[def_at:]
    first = lines[0]
    indent = len(first) - len(first.lstrip())
    out = []
    for k, line in enumerate(lines):
        body = line.rstrip("\n")
        cut = indent if body[:indent].strip() == "" else 0
        out.append((body[cut:], start + def_at + k, indent))
    return out


def _annotation_text(a):
    if isinstance(a, str):
        # `from __future__ import annotations` keeps the annotation's source.
        if a[:1] in "\"'":
            try:
                v = ast.literal_eval(a)
                if isinstance(v, str):
                    return v
            except (ValueError, SyntaxError):
                pass
        return a
    return None


def from_function(fn):
    fn = _unwrap(fn)
    if not isinstance(fn, types.FunctionType):
        raise SpecError(f"axon.jit takes a Python function, got {type(fn).__name__}")
    path = inspect.getsourcefile(fn) or fn.__code__.co_filename
    module = fn.__module__
    preamble = []
    seen_pre = set()
    chunks = []
    seen_fn = set()

    def pre(line):
        if line not in seen_pre:
            seen_pre.add(line)
            preamble.append(line)

    def visit(f):
        if f.__code__ in seen_fn:
            return
        seen_fn.add(f.__code__)
        chunks.append(_function_lines(f))
        g = f.__globals__
        if f.__closure__:
            for name, cell in zip(f.__code__.co_freevars, f.__closure__):
                try:
                    v = cell.cell_contents
                except ValueError:
                    continue
                take(name, v)
        for name in _names(f.__code__):
            if name in g:
                take(name, g[name])

    def take(name, v):
        v = _unwrap(v)
        if v is numpy:
            pre("import numpy" if name == "numpy" else f"import numpy as {name}")
        elif isinstance(v, types.FunctionType) and v.__module__ == module:
            visit(v)
        elif isinstance(v, (bool, int, float)):
            pre(f"{name} = {v!r}")
        elif callable(v) and getattr(numpy, getattr(v, "__name__", ""), None) is v:
            alias = "" if v.__name__ == name else f" as {name}"
            pre(f"from numpy import {v.__name__}{alias}")

    visit(fn)
    text_lines = list(preamble)
    line_map = [(0, 0)] * len(preamble)
    for chunk in chunks:
        text_lines.append("")
        line_map.append((0, 0))
        for body, file_line, shift in chunk:
            text_lines.append(body)
            line_map.append((file_line, shift))
    params = []
    try:
        sig = inspect.signature(fn)
        for p in sig.parameters.values():
            a = None if p.annotation is inspect.Parameter.empty else _annotation_text(p.annotation)
            params.append((p.name, a))
    except (TypeError, ValueError):
        pass
    return SpecSource(path, "\n".join(text_lines) + "\n", fn.__name__, line_map, params)
