"""Corpus programs whose reductions are split across threads, against numpy.

Each program below is a loops kernel with a reduction that no parallel loop
divides (a whole tensor's, or one over axis 0): at `k0.loops.split` 1 on
two threads tile/passes/parallel_sums.h cuts it into one chunk per thread
with private partials (the kernel's `_parts` buffers), at 0 it stays on one
thread. Both kernels are compiled as axon builds them, run on the same
float32 normal inputs through ctypes, and compared with numpy's float64
evaluation of the spec on those inputs: within 1e-4 of the output's scale.
"""

import ctypes
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import AXON_BIN, SOURCE_DIR, import_spec, entry_function, kernel_library, require_axon  # noqa: E402

PROGRAMS = ["logsumexp_all", "frobenius_norm", "mse_loss", "kl_div", "mean_axis0", "var_axis0", "logsumexp_axis0",
            "softmax_axis0", "concat_axis0_mean"]
SCHEDULE = {"k0.loops.inline": 1, "k0.loops.threads": 2, "k0.loops.vectorize": 1}


def compile_kernel(spec, folder, split):
    schedule = dict(SCHEDULE, **{"k0.loops.split": split})
    r = subprocess.run([str(AXON_BIN), "compile", str(spec), "-o", str(folder), "--schedule", json.dumps(schedule)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    source = (folder / "kernel.cpp").read_text()
    header = (folder / "kernel.h").read_text()
    entry = re.search(r"void (\w+)\(", header).group(1)
    outputs = [tuple(int(d) for d in dims.split(",") if d.strip())
               for dims in re.findall(r"^//\s+\w+\s+f32\[([0-9, ]*)\]\s+output", header, re.M)]
    return source, getattr(kernel_library(folder), entry), outputs


def run(fn, inputs, shapes):
    outs = [np.full(s, np.nan, dtype=np.float32) for s in shapes]
    fn(*[ctypes.c_void_p(a.ctypes.data) for a in inputs + outs])
    return outs


@pytest.mark.parametrize("name", PROGRAMS)
def test_split_kernel_matches_numpy(name, tmp_path):
    require_axon()
    spec = SOURCE_DIR / "bench" / "corpus" / f"{name}.py"
    fn = entry_function(import_spec(spec))
    shapes = [tuple(int(d) for d in re.fullmatch(r"\s*\w+\[(.*)\]\s*", p.annotation).group(1).split(","))
              for p in __import__("inspect").signature(fn).parameters.values()]
    rng = np.random.default_rng(len(name))
    inputs = [np.ascontiguousarray(rng.standard_normal(s, dtype=np.float32)) for s in shapes]
    with np.errstate(all="ignore"):
        want = fn(*[a.astype(np.float64) for a in inputs])
    want = [np.asarray(w) for w in (want if isinstance(want, tuple) else (want,))]
    for split in (1, 0):
        folder = tmp_path / f"split{split}"
        source, kernel, out_shapes = compile_kernel(spec, folder, split)
        assert ("_parts" in source) == (split == 1), f"{name}: split {split} and its kernel's partials disagree"
        got = run(kernel, inputs, out_shapes)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape, (name, split, g.shape, w.shape)
            scale = max(1.0, float(np.abs(w).max()))
            err = float(np.abs(g.astype(np.float64) - w).max())
            assert err <= 1e-4 * scale, f"{name} at split {split}: largest difference {err:.3g} (scale {scale:.3g})"
