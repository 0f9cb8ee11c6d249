"""The parts of `axon run`'s contract the other tests lean on: the seed
decides the inputs, runs repeat exactly, the dump and JSON are complete."""

import json

import numpy as np

import conftest

SPEC = '''import numpy as np


def f(x: "f32[4, 6]", s: "f32[]", y: "f32[6]"):
    return np.where(x > y, x, y) * s, np.sum(x, axis=0)
'''

BOOL_SPEC = '''import numpy as np


def f(c: "bool[4, 6]", x: "f32[4, 6]"):
    return np.where(c, x, 0.0)
'''


def _run(tmp_path, name, *args, text=SPEC):
    spec = tmp_path / "spec.py"
    spec.write_text(text)
    dump = tmp_path / name
    proc = conftest.run_axon(["run", spec, "--json", "--dump", dump, *args], timeout=120)
    assert proc.returncode == 0, conftest.describe(proc)
    return json.loads(proc.stdout), dump


def test_json_and_dump_are_complete(tmp_path):
    report, dump = _run(tmp_path, "a", "--seed", "5")
    assert report["entry"] == "f"
    assert report["params"] == [{"name": "x", "type": "f32[4, 6]"}, {"name": "s", "type": "f32[]"},
                                {"name": "y", "type": "f32[6]"}]
    assert report["outputs"] == ["f32[4, 6]", "f32[6]"]
    assert report["seed"] == 5
    assert report["within_budget"] is True
    assert [c["output"] for c in report["checks"]] == [0, 1]
    for c in report["checks"]:
        assert set(c) >= {"output", "type", "within_budget", "max_error_over_budget", "max_abs_error",
                          "elements_over_budget", "worst"}
        assert c["elements_over_budget"] == 0 and c["max_error_over_budget"] <= 1
    assert set(report["time_ms"]) >= {"naive", "min", "max", "reps"}  # timed without --no-time
    names = sorted(p.name for p in dump.iterdir())
    assert names == ["bound0.npy", "bound1.npy", "in0.npy", "in1.npy", "in2.npy",
                     "out0.npy", "out1.npy", "ref0.npy", "ref1.npy"]
    assert np.load(dump / "in1.npy").shape == (), "a 0-d parameter is dumped as a 0-d array"
    x = np.load(dump / "in0.npy")
    assert np.array_equal(x.astype(np.float32).astype(np.float64), x), "inputs must be exact in float32"
    assert np.unique(x).size == x.size, "inputs should not repeat"


def test_same_seed_same_everything(tmp_path):
    _, a = _run(tmp_path, "a", "--seed", "3", "--no-time")
    _, b = _run(tmp_path, "b", "--seed", "3", "--no-time")
    for f in sorted(a.iterdir()):
        assert np.array_equal(np.load(f), np.load(b / f.name), equal_nan=True), f.name


def test_other_seed_other_inputs(tmp_path):
    _, a = _run(tmp_path, "a", "--seed", "3", "--no-time")
    _, b = _run(tmp_path, "b", "--seed", "4", "--no-time")
    assert not np.array_equal(np.load(a / "in0.npy"), np.load(b / "in0.npy"))
    assert not np.array_equal(np.load(a / "ref1.npy"), np.load(b / "ref1.npy"))


def test_default_seed_is_stable(tmp_path):
    _, a = _run(tmp_path, "a", "--no-time")
    _, b = _run(tmp_path, "b", "--seed", "1", "--no-time")
    assert np.array_equal(np.load(a / "in0.npy"), np.load(b / "in0.npy")), "the default seed is 1"


def test_bool_inputs_are_dumped_as_0_1(tmp_path):
    _, dump = _run(tmp_path, "a", "--no-time", text=BOOL_SPEC)
    c = np.load(dump / "in0.npy")
    assert c.dtype == np.float64 and c.shape == (4, 6)
    assert set(np.unique(c)) == {0.0, 1.0}, "bool inputs are dumped as 0/1, and both values occur"
