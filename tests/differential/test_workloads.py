"""Every benchmark workload: the compiled naive kernel is within its error
budget, the interpreter agrees with numpy's float64 evaluation of the same
file, and the budget check is redone here so the C++ comparison is itself
checked."""

import pytest

import conftest

WORKLOADS = sorted((conftest.SOURCE_DIR / "bench" / "workloads").glob("*.py"))


def test_workloads_found():
    assert len(WORKLOADS) == 20, [w.name for w in WORKLOADS]


@pytest.mark.parametrize("spec", WORKLOADS, ids=[w.stem for w in WORKLOADS])
def test_workload(spec, tmp_path):
    try:
        conftest.differential_check(spec, tmp_path / "dump")
    except conftest.Unsupported as e:
        pytest.fail(f"a benchmark workload must be supported: {e}")
