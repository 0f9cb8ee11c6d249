"""Every benchmark workload: the compiled naive kernel is within its error
budget, the interpreter agrees with numpy's float64 evaluation of the same
file, and the budget check is redone here so the C++ comparison is itself
checked.

The float64 interpreter takes most of the time (about a minute for each
16x1024x1024 attention, over seven minutes for all twenty), so the `axon
run`s of the selected workloads start when collection ends, as many at once
as there are cores (at most 4), while the other tests run; each test waits
for its own. The dumps are large (m2 writes ~130 MB) and are deleted after
each check.
"""

import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import conftest

WORKLOADS = sorted((conftest.SOURCE_DIR / "bench" / "workloads").glob("*.py"))
# The slowest first, so that the pool ends evenly (interpreter seconds, roughly).
COST = {"m2_matmul_bias_gelu": 75, "m6_causal_attention": 60, "m9_qknorm_attention": 60, "m5_attention": 55,
        "m1_rmsnorm_matmul": 37, "s5_gelu": 29, "m3_gated_mlp": 23, "m10_add_layernorm": 19}

_runs = {}


def start_background(items):
    if not conftest.AXON_BIN.is_file():
        return
    stems = {item.callspec.params["spec"].stem for item in items if hasattr(item, "callspec")}
    chosen = sorted((w for w in WORKLOADS if w.stem in stems), key=lambda w: (-COST.get(w.stem, 0), w.stem))
    if not chosen:
        return
    root = Path(tempfile.mkdtemp(prefix="axon-workloads-"))
    pool = ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)))
    for w in chosen:
        dump = root / w.stem
        _runs[w.stem] = (dump, pool.submit(conftest.run_axon, conftest.run_args(w, dump), 900))
    pool.shutdown(wait=False)


def test_workloads_found():
    assert len(WORKLOADS) == 20, [w.name for w in WORKLOADS]


@pytest.mark.parametrize("spec", WORKLOADS, ids=[w.stem for w in WORKLOADS])
def test_workload(spec, tmp_path):
    conftest.require_axon()
    if spec.stem in _runs:
        dump, future = _runs[spec.stem]
        proc = future.result()
    else:
        dump, proc = tmp_path / "dump", None
    try:
        conftest.differential_check(spec, dump, proc=proc, timeout=900)
        return
    except conftest.Unsupported as e:
        failure = f"a benchmark workload must be supported: {e}"
    except AssertionError as e:
        failure = str(e)
    finally:
        shutil.rmtree(dump, ignore_errors=True)
    pytest.fail(failure, pytrace=False)
