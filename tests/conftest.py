"""Shared helpers for the Python-driven suites (golden, errors, differential, property).

numpy is the oracle; the axon binary is the thing under test. The binary comes
from $AXON_BIN and the repository root from $AXON_SOURCE_DIR, falling back to
build/axon and the parent of this folder.

The test modules import this file as `conftest` (pytest puts its folder on
sys.path), so everything here is plain functions, not fixtures.
"""

import ctypes
import errno
import importlib.util
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

SOURCE_DIR = Path(os.environ.get("AXON_SOURCE_DIR", Path(__file__).resolve().parent.parent))
AXON_BIN = Path(os.environ.get("AXON_BIN", SOURCE_DIR / "build" / "axon"))

# A process the operating system refused to start is no verdict on axon: on
# a loaded machine execve has failed once with EFAULT (and fork can fail with
# EAGAIN or ENOMEM) while the suites launched processes from several threads.
# subprocess.run, for every suite (this file is loaded before any test
# module), tries such a launch again, up to three times, and says so on
# stderr; any other error, and every exit status of a process that started,
# goes to the test unchanged.
_LAUNCH_REFUSED = {errno.EFAULT, errno.EAGAIN, errno.ENOMEM}
_subprocess_run = subprocess.run


def _run_starting_again_when_refused(*args, **kwargs):
    for attempt in range(3):
        try:
            return _subprocess_run(*args, **kwargs)
        except OSError as e:
            if e.errno not in _LAUNCH_REFUSED or attempt == 2:
                raise
            print(f"conftest: the system refused to start {args[0] if args else kwargs.get('args')!r} "
                  f"({e}); starting it again", file=sys.stderr)
            time.sleep(1.0 + attempt)


subprocess.run = _run_starting_again_when_refused

# Exit codes of the CLI (tools/axon.cpp).
EXIT_OK, EXIT_USER_ERROR, EXIT_INTERNAL, EXIT_OVER_BUDGET = 0, 1, 2, 3

# Tolerance of numpy's float64 evaluation against the float64 interpreter:
# both compute the same real function, only the rounding order differs.
NUMPY_RTOL = 1e-12

TINY = 2.0 ** -126  # the absolute floor of every element budget


def kernel_library(folder):
    """folder/kernel.cpp built with g++ into folder/kernel.so and loaded
    (ctypes); the test is skipped where there is no g++."""
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("g++ not found")
    lib = Path(folder) / "kernel.so"
    c = subprocess.run([cxx, "-O2", "-march=native", "-ffp-contract=off", "-fPIC", "-shared", "-fopenmp", "-o",
                        str(lib), str(Path(folder) / "kernel.cpp")], capture_output=True, text=True, timeout=300)
    assert c.returncode == 0, c.stderr
    return ctypes.CDLL(str(lib))


def require_axon():
    """Skips (loudly) when the binary has not been built."""
    if not AXON_BIN.is_file():
        pytest.skip(f"axon binary not found at {AXON_BIN} (build it, or set AXON_BIN)")


def run_axon(args, timeout=600):
    """Runs the CLI; returns the CompletedProcess (text mode)."""
    require_axon()
    return subprocess.run([str(AXON_BIN), *[str(a) for a in args]], capture_output=True, text=True,
                          timeout=timeout, cwd=SOURCE_DIR)


def _index(k):
    return tuple(int(i) for i in k)


def _num(v):
    return repr(float(v))


def describe(proc):
    return f"exit {proc.returncode}\n--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}"


# --------------------------------------------------------------------------
# Specs as Python modules

_module_counter = [0]


def import_spec(path):
    """Imports a spec file as a fresh module (a spec is plain numpy)."""
    _module_counter[0] += 1
    name = f"axon_spec_{_module_counter[0]}_{Path(path).stem}"
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def entry_function(module):
    """The entry point by axon's rule: the last function (in source order)
    whose parameters all carry annotations."""
    functions = [f for f in vars(module).values()
                 if inspect.isfunction(f) and f.__module__ == module.__name__]
    functions.sort(key=lambda f: f.__code__.co_firstlineno)
    annotated = [f for f in functions
                 if inspect.signature(f).parameters
                 and all(p.annotation is not inspect.Parameter.empty
                         for p in inspect.signature(f).parameters.values())]
    assert annotated, f"{module.__file__}: no function with all parameters annotated"
    return annotated[-1]


_TYPE_RE = re.compile(r"^(\w+)\[(.*)\]$")
_NUMPY_DTYPE = {"bool": np.bool_, "i32": np.int32, "i64": np.int64,
                "f16": np.float64, "bf16": np.float64, "f32": np.float64, "f64": np.float64}


def parse_type(text):
    """'f32[4, 5]' -> ('f32', (4, 5)); 'f32[]' -> ('f32', ())."""
    m = _TYPE_RE.match(text.strip())
    assert m, f"not a type string: {text!r}"
    dims = tuple(int(d) for d in m.group(2).split(",") if d.strip())
    return m.group(1), dims


def numpy_inputs(dump_dir, params):
    """The dumped inputs as numpy arrays: floats stay float64 (numpy then
    evaluates the spec over the reals, up to float64 rounding, like the
    interpreter); bools become bool arrays and ints int arrays."""
    arrays = []
    for i, p in enumerate(params):
        dtype, shape = parse_type(p["type"])
        a = np.load(Path(dump_dir) / f"in{i}.npy")
        assert a.dtype == np.float64, f"in{i}.npy is {a.dtype}, expected float64"
        assert a.shape == shape, f"in{i}.npy has shape {a.shape}, parameter {p['name']} is {p['type']}"
        arrays.append(a.astype(_NUMPY_DTYPE[dtype]))
    return arrays


def as_output_list(result):
    if isinstance(result, tuple):
        return [np.asarray(r) for r in result]
    return [np.asarray(result)]


# --------------------------------------------------------------------------
# The two comparisons


def compare_numpy_with_reference(numpy_out, ref, what):
    """Returns a failure message, or None when numpy's float64 value agrees
    with the interpreter's: same shape, the same inf/NaN positions, and the
    finite values within 1e-12 (relative, with an absolute floor scaled by
    the output's magnitude)."""
    numpy_out = np.asarray(numpy_out)
    if numpy_out.shape != ref.shape:
        return f"{what}: numpy gives shape {numpy_out.shape}, the interpreter {ref.shape}"
    x = numpy_out.astype(np.float64)
    nan_x, nan_r = np.isnan(x), np.isnan(ref)
    if not np.array_equal(nan_x, nan_r):
        k = _index(np.argwhere(nan_x != nan_r)[0])
        return f"{what}: NaN positions differ, first at {k}: numpy {_num(x[k])}, interpreter {_num(ref[k])}"
    inf_x, inf_r = np.isinf(x), np.isinf(ref)
    if not np.array_equal(inf_x, inf_r) or not np.array_equal(x[inf_x], ref[inf_r]):
        k = _index(np.argwhere((inf_x != inf_r) | (inf_x & (x != ref)))[0])
        return f"{what}: inf positions differ, first at {k}: numpy {_num(x[k])}, interpreter {_num(ref[k])}"
    finite = np.isfinite(x)
    if not finite.any():
        return None
    scale = max(1.0, float(np.abs(x[finite]).max()))
    atol = NUMPY_RTOL * scale
    close = np.isclose(ref[finite], x[finite], rtol=NUMPY_RTOL, atol=atol)
    if not close.all():
        k = _index(np.argwhere(finite)[np.argmin(close)])
        return (f"{what}: numpy and the interpreter differ at {k}: numpy {_num(x[k])}, interpreter {_num(ref[k])} "
                f"(|diff| {abs(x[k] - ref[k]):.3g}, tolerance {atol + NUMPY_RTOL * abs(x[k]):.3g}; "
                f"{int((~close).sum())} of {close.size} elements)")
    return None


def compare_kernel_with_budget(out, ref, bound, what):
    """Re-checks the C++ comparison: |out - ref| <= 2 E + 2^-126 for finite
    references; a non-finite reference must be matched exactly unless its own
    bound is not finite (then nothing is promised). Returns a message or None."""
    if not (out.shape == ref.shape == bound.shape):
        return f"{what}: shapes out {out.shape}, ref {ref.shape}, bound {bound.shape}"
    if (bound[np.isfinite(bound)] < 0).any():
        return f"{what}: the error bound has negative elements"
    budget = 2.0 * bound + TINY
    with np.errstate(invalid="ignore"):
        both_finite = np.isfinite(ref) & np.isfinite(out)
        err = np.where(both_finite, np.abs(out - ref), 0.0)
        over = both_finite & ~(err <= budget) & ~np.isnan(budget)
        same_nonfinite = (np.isnan(ref) & np.isnan(out)) | (ref == out)
        nonfinite_bad = ~both_finite & ~same_nonfinite & np.isfinite(bound)
    bad = over | nonfinite_bad
    if bad.any():
        k = _index(np.argwhere(bad)[0])
        return (f"{what}: kernel over budget at {k}: out {_num(out[k])}, ref {_num(ref[k])}, bound E {_num(bound[k])} "
                f"({int(bad.sum())} of {bad.size} elements over)")
    return None


# --------------------------------------------------------------------------
# One full differential check of a spec


def _require(cond, message):
    """Like assert, but with only our message (no introspection noise), so
    that failure texts are short enough to read and to classify."""
    if not cond:
        raise AssertionError(message)


class Unsupported(Exception):
    """axon refused valid numpy with 'error: unsupported:'."""


def run_args(spec_path, dump_dir, extra_args=(), seed=1):
    return ["run", spec_path, "--no-time", "--json", "--seed", seed, "--dump", dump_dir, *extra_args]


def differential_check(spec_path, dump_dir, extra_args=(), seed=1, timeout=600, proc=None):
    """Runs `axon run` on a spec (or takes `proc`, the finished run of
    run_args(...)) and checks:
      1. axon exits 0 and says within_budget (and its pieces agree);
      2. the dumped reference equals numpy's float64 evaluation of the spec;
      3. the dumped kernel outputs are within budget, recomputed here.
    Returns the JSON report. Raises Unsupported for a known gap; otherwise
    raises AssertionError whose text starts with the kind of failure:
    [exit N], [contract], [over budget], [numpy mismatch] or [re-check]."""
    args = run_args(spec_path, dump_dir, extra_args, seed)
    if proc is None:
        proc = run_axon(args, timeout=timeout)
    if proc.returncode == EXIT_USER_ERROR and "error: unsupported:" in proc.stderr:
        raise Unsupported(proc.stderr.strip().splitlines()[0])
    _require(proc.returncode in (EXIT_OK, EXIT_OVER_BUDGET),
             f"[exit {proc.returncode}] axon {' '.join(map(str, args))}\n{describe(proc)}")
    report = json.loads(proc.stdout)
    checks = report["checks"]
    _require("time_ms" not in report, "[contract] --no-time still timed the kernel")
    _require(len(checks) == len(report["outputs"]), "[contract] one check per output expected")
    _require(report["within_budget"] == all(c["within_budget"] for c in checks),
             "[contract] within_budget disagrees with the checks")
    _require((proc.returncode == EXIT_OK) == report["within_budget"],
             f"[contract] exit code {proc.returncode} disagrees with within_budget={report['within_budget']}")

    module = import_spec(spec_path)
    fn = entry_function(module)
    _require(fn.__name__ == report["entry"],
             f"[contract] axon chose entry {report['entry']}, the rule gives {fn.__name__}")
    names = list(inspect.signature(fn).parameters)
    _require(names == [p["name"] for p in report["params"]],
             f"[contract] parameter order {names} vs {report['params']}")
    inputs = numpy_inputs(dump_dir, report["params"])
    with np.errstate(all="ignore"):
        outputs = as_output_list(fn(*inputs))
    _require(len(outputs) == len(report["outputs"]),
             f"[contract] numpy returns {len(outputs)} outputs, axon {len(report['outputs'])}")

    problems = []
    if not report["within_budget"]:
        problems.append("[over budget] axon: " + json.dumps([c for c in checks if not c["within_budget"]]))
    for j, (got, type_text) in enumerate(zip(outputs, report["outputs"])):
        _, shape = parse_type(type_text)
        ref = np.load(Path(dump_dir) / f"ref{j}.npy")
        bound = np.load(Path(dump_dir) / f"bound{j}.npy")
        out = np.load(Path(dump_dir) / f"out{j}.npy")
        if ref.shape != shape:
            problems.append(f"[contract] ref{j}.npy has shape {ref.shape}, output type {type_text}")
            continue
        msg = compare_numpy_with_reference(got, ref, f"output {j} {type_text}")
        if msg:
            problems.append("[numpy mismatch] " + msg)
        msg = compare_kernel_with_budget(out, ref, bound, f"output {j} {type_text}")
        if msg:
            tag = "[re-check]" if checks[j]["within_budget"] else "[over budget]"
            note = " (axon reported this output within budget)" if checks[j]["within_budget"] else ""
            problems.append(f"{tag} {msg}{note}")
    # The first problem names the kind; the order above puts axon's own verdict first.
    if problems:
        tag = re.match(r"\[[^\]]+\]", problems[0]).group(0)
        raise AssertionError(f"{tag} {spec_path}:\n" + "\n".join(problems))
    return report


# --------------------------------------------------------------------------
# Early starts: a test module may define start_background(items), called once
# with its selected test items when collection ends, so that slow `axon run`s
# proceed while other tests run.


def pytest_collection_finish(session):
    by_module = {}
    for item in session.items:
        module = getattr(item, "module", None)
        if module is not None and hasattr(module, "start_background"):
            by_module.setdefault(module, []).append(item)
    for module, items in by_module.items():
        module.start_background(items)


# --------------------------------------------------------------------------
# Lines a test wants read after the run (measured numbers), printed in the
# terminal summary whether or not output is captured.

_report_lines = []


def report(line):
    _report_lines.append(line)


def pytest_terminal_summary(terminalreporter):
    if _report_lines:
        terminalreporter.section("measured")
        for line in sorted(_report_lines):
            terminalreporter.write_line(line)
