"""Transposes of every rank read by the loops that use them, against numpy.

A transpose that keeps the last axis contiguous, or that only elementwise maps
read, is no layout copy of its own: the loops stage reads it in place, in
register-transposed blocks where it crosses rows (tile/passes/transpose_blocks.h).
Each program below is compiled by `axon compile --schedule {}` (the host's
default schedule), built as axon builds kernels, run on float32 normal inputs
through ctypes, and compared with numpy's float64 evaluation of the same
function on those inputs: within 1e-5 of the output's scale. Sizes leave
edges on the blocks (16 and 8 wide); one program of each kind is checked to
print no intermediate buffer.
"""

import ctypes
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import EXIT_OK, kernel_library, require_axon, run_axon  # noqa: E402

# (name, parameters, body, numpy function over the float64 inputs)
PROGRAMS = [
    ("swap2d", {"x": (37, 50), "y": (50, 37)}, "np.transpose(x) * 2.0 + y", lambda x, y: np.transpose(x) * 2.0 + y),
    ("rows", {"x": (40, 9, 48), "y": (9, 40, 48)}, "np.transpose(x, (1, 0, 2)) + y",
     lambda x, y: np.transpose(x, (1, 0, 2)) + y),
    ("method", {"x": (6, 40, 33), "b": (40,)}, "x.transpose(2, 0, 1) + b", lambda x, b: x.transpose(2, 0, 1) + b),
    ("heads", {"x": (2, 33, 5, 32)}, "np.transpose(x, (0, 2, 1, 3)) * 0.125",
     lambda x: np.transpose(x, (0, 2, 1, 3)) * 0.125),
    ("nhwc_map", {"x": (2, 24, 5, 19)}, "np.tanh(np.transpose(x, (0, 2, 3, 1)))",
     lambda x: np.tanh(np.transpose(x, (0, 2, 3, 1)))),
    ("both_ways", {"x": (40, 40)}, "x.T - x", lambda x: x.T - x),
    ("rank5", {"x": (2, 3, 20, 4, 18)}, "np.maximum(np.transpose(x, (0, 4, 1, 3, 2)), 0.0)",
     lambda x: np.maximum(np.transpose(x, (0, 4, 1, 3, 2)), 0.0)),
    ("nhwc_copy", {"x": (3, 20, 7, 9)}, "np.transpose(x, (0, 2, 3, 1))", lambda x: np.transpose(x, (0, 2, 3, 1))),
]


def spec_text(params, body):
    args = ", ".join(f'{n}: "f32[{", ".join(str(d) for d in s)}]"' for n, s in params.items())
    return f"import numpy as np\n\ndef f({args}):\n    return {body}\n"


def build(folder):
    return kernel_library(folder).f


@pytest.mark.parametrize("name,params,body,fn", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_transposed_kernel_matches_numpy(name, params, body, fn, tmp_path):
    require_axon()
    spec = tmp_path / f"{name}.py"
    spec.write_text(spec_text(params, body))
    r = run_axon(["compile", spec, "-o", tmp_path / "out", "--schedule", json.dumps({})])
    assert r.returncode == EXIT_OK, r.stderr
    source = (tmp_path / "out" / "kernel.cpp").read_text()
    # Read in place: no buffer between a copy and the map (the copy alone is
    # a copy stage writing the output).
    assert not re.search(r"axon_alloc\(\d+\)|aligned_alloc\(64, \d+\)", source), f"{name}: an intermediate buffer\n{source}"
    kernel = build(tmp_path / "out")
    rng = np.random.default_rng(len(name))
    inputs = [np.ascontiguousarray(rng.standard_normal(s, dtype=np.float32)) for s in params.values()]
    want = fn(*[a.astype(np.float64) for a in inputs])
    got = np.full(want.shape, np.nan, dtype=np.float32)
    kernel(*[ctypes.c_void_p(a.ctypes.data) for a in inputs + [got]])
    scale = max(1.0, float(np.abs(want).max()))
    err = float(np.abs(got.astype(np.float64) - want).max())
    assert err <= 1e-5 * scale, f"{name}: largest difference {err:.3g} (scale {scale:.3g})"


def test_blocks_print_as_register_transposes():
    require_axon()
    flags = open("/proc/cpuinfo").read()
    if "avx2" not in flags:
        pytest.skip("no AVX2: the blocks print as loops")
    width = 16 if "avx512f" in flags else 8
    spec = Path(__file__).resolve().parents[2] / "bench" / "corpus" / "transpose_method.py"
    r = run_axon(["lower", spec, "--pipeline", "stages"])
    assert r.returncode == EXIT_OK, r.stderr
    assert "# stage" not in r.stdout and "# the whole graph (loops)" in r.stdout, r.stdout
    assert re.search(rf"alloc t\d+_tile: scratch f32\[{width}, {width}\]", r.stdout), r.stdout
    assert re.search(rf"copy t\d+_tile\{{offset 0, strides \[{width}, 1\]\}} = x\{{.*strides \[1, 512\]\}}", r.stdout), \
        r.stdout
