"""Every benchmark workload: the compiled naive kernel is within its error
budget, the interpreter agrees with numpy's float64 evaluation of the same
file, and the budget check is redone here so the C++ comparison is itself
checked.

The float64 interpreter takes most of the time (about a minute for each
16x1024x1024 attention), so the `axon run`s start together, as many at once
as there are cores (at most 4), and each test waits for its own.
"""

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

import conftest

WORKLOADS = sorted((conftest.SOURCE_DIR / "bench" / "workloads").glob("*.py"))
# The slowest first, so that the pool ends evenly.
SLOW_FIRST = ["m5_attention", "m6_causal_attention", "m9_qknorm_attention", "m1_rmsnorm_matmul",
              "m2_matmul_bias_gelu", "m3_gated_mlp"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    conftest.require_axon()
    root = tmp_path_factory.mktemp("workloads")
    order = sorted(WORKLOADS, key=lambda w: (SLOW_FIRST.index(w.stem) if w.stem in SLOW_FIRST else 99, w.stem))
    pool = ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)))
    futures = {}
    for w in order:
        dump = root / w.stem
        futures[w.stem] = (dump, pool.submit(conftest.run_axon, conftest.run_args(w, dump), 900))
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def test_workloads_found():
    assert len(WORKLOADS) == 20, [w.name for w in WORKLOADS]


@pytest.mark.parametrize("spec", WORKLOADS, ids=[w.stem for w in WORKLOADS])
def test_workload(spec, runs):
    dump, future = runs[spec.stem]
    try:
        conftest.differential_check(spec, dump, proc=future.result())
    except conftest.Unsupported as e:
        pytest.fail(f"a benchmark workload must be supported: {e}")
