"""@axon.jit and axon.optimize on numpy arrays (the axon package, issue 23).

Results are compared with numpy's own float64 evaluation of the same
function; the caching is asserted on the function's counters (`stats`) and
on the tuning database's answers, never on time.
"""

import os
import tempfile

import numpy as np
import pytest

from pysupport import FAST, SOURCE_DIR, assert_close, axon, float64_reference

import specs_as_functions as S

rng = np.random.default_rng(7)

# This module's own database, so that its first call really searches
# whatever the other modules searched before.
JIT = dict(FAST, db=os.path.join(tempfile.mkdtemp(prefix="axon-pytest-jit-"), "tuning.sqlite"))


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


@pytest.fixture(scope="module")
def scale_rows():
    return axon.jit(S.scale_rows, **JIT)


def test_numpy_arguments_give_numpys_float64_results(scale_rows):
    x, w = rand(32, 64), rand(64)
    y = scale_rows(x, w)
    assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == (32, 64)
    assert_close(y, float64_reference(S.scale_rows, x, w))
    assert scale_rows.stats["optimized"] == 1 and scale_rows.stats["searched"] == 1


def test_a_second_call_with_the_same_shapes_does_not_search_again(scale_rows):
    scale_rows(rand(32, 64), rand(64))
    before = dict(scale_rows.stats)
    for _ in range(3):
        x, w = rand(32, 64), rand(64)
        assert_close(scale_rows(x, w), float64_reference(S.scale_rows, x, w))
    assert scale_rows.stats == before


def test_a_new_shape_triggers_one_search(scale_rows):
    scale_rows(rand(32, 64), rand(64))
    before = dict(scale_rows.stats)
    x, w = rand(48, 64), rand(64)
    assert_close(scale_rows(x, w), float64_reference(S.scale_rows, x, w))
    scale_rows(rand(48, 64), rand(64))
    assert scale_rows.stats["optimized"] == before["optimized"] + 1
    assert scale_rows.stats["kernels"] == before["kernels"] + 1
    # The first signature is still served from memory.
    scale_rows(rand(32, 64), rand(64))
    assert scale_rows.stats["optimized"] == before["optimized"] + 1


def test_a_fresh_function_is_answered_by_the_tuning_database(scale_rows):
    scale_rows(rand(32, 64), rand(64))
    again = axon.jit(S.scale_rows, **JIT)
    x, w = rand(32, 64), rand(64)
    assert_close(again(x, w), float64_reference(S.scale_rows, x, w))
    assert again.stats == {"optimized": 1, "searched": 0, "answered_from_db": 1, "kernels": 1}
    assert again.report(x, w)["search"]["stop_reason"] == "database"


def test_report_and_source(scale_rows):
    x, w = rand(32, 64), rand(64)
    report = scale_rows.report(x, w)
    assert report["entry"] == "scale_rows"
    assert report["verification"]
    assert report == scale_rows.report(N=32)
    src = scale_rows.source(x, w)
    assert "scale_rows" in src and 'extern "C"' in scale_rows.header(N=32)


def test_helpers_constants_and_several_outputs():
    f = axon.jit(S.rms_stats, **FAST)
    x = rand(16, 40)
    y, ms = f(x)
    ref_y, ref_ms = float64_reference(S.rms_stats, x)
    assert y.shape == (16, 40) and ms.shape == (16,)
    assert_close(y, ref_y)
    assert_close(ms, ref_ms)


def test_the_decorator_forms():
    @axon.jit
    def plain(x: "f32[4]"):
        return x * 2.0

    @axon.jit(budget=2, trials=2)
    def configured(x: "f32[4]"):
        return x * 3.0

    assert plain.options.budget == 30 and configured.options.budget == 2
    assert plain.__name__ == "plain"
    x = rand(4)
    assert_close(configured(x), x * 3.0)


def test_optimize_a_spec_file_with_named_dims():
    k = axon.optimize(SOURCE_DIR / "tests" / "python" / "specs" / "scale_rows.py", {"N": 32}, **FAST)
    x, w = rand(32, 64), rand(64)
    assert_close(k(x, w), float64_reference(S.scale_rows, x, w))
    assert k.signature["params"] == [("x", "f32[32, 64]"), ("w", "f32[64]")]
    assert k.report["spec"].endswith("scale_rows.py")


def test_optimize_a_function_with_one_shape_per_parameter():
    k = axon.optimize(S.scale_rows, [(32, 64), (64,)], **FAST)
    assert k.signature["outputs"] == ["f32[32, 64]"]
    x, w = rand(32, 64), rand(64)
    assert_close(k(x, w), float64_reference(S.scale_rows, x, w))


def test_the_default_database_is_under_the_users_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("AXON_DB", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert axon.default_db_path() == str(tmp_path / "axon" / "tuning.sqlite")
    monkeypatch.setenv("AXON_DB", str(tmp_path / "mine.sqlite"))
    assert axon.default_db_path() == str(tmp_path / "mine.sqlite")


def test_a_search_releases_the_gil_and_is_quiet_off_a_terminal(capfd):
    import threading
    import time

    count = [0]
    done = threading.Event()

    def spin():
        while not done.is_set():
            count[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        c0, t0 = count[0], time.perf_counter()
        time.sleep(0.3)  # the main thread waits without the GIL: the spinner's full rate
        rate = (count[0] - c0) / (time.perf_counter() - t0)
        f = axon.jit(S.scale_rows, **JIT)
        c0, t0 = count[0], time.perf_counter()
        f(rand(24, 64), rand(64))
        elapsed = time.perf_counter() - t0
        during = count[0] - c0
    finally:
        done.set()
        t.join()
    assert f.stats["searched"] == 1
    # Holding the GIL through a search of about two seconds would leave the
    # spinner a few switch intervals at most.
    assert during > 0.1 * rate * elapsed, (during, rate, elapsed)
    assert capfd.readouterr().err == ""
