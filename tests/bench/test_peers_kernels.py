"""bench/harness/peers.py with --kernel and --interleave-rounds (docs/bench.md).

A compiled kernel is checked against numpy's output like a peer before it is
timed; only the contenders that passed are interleaved. Run on axon's naive
kernel of a small softmax (right) and a hand-written one that is not (wrong).
"""

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import AXON_BIN, SOURCE_DIR, require_axon  # noqa: E402

SPEC = SOURCE_DIR / "tests" / "optimize" / "specs" / "small_softmax.py"
PEERS_PY = SOURCE_DIR / "bench" / "harness" / "peers.py"

WRONG = """
extern "C" void small_softmax(const float* X, float* out0) {
  for (int i = 0; i < 64 * 128; ++i) out0[i] = X[i] > 0 ? 1.0f / 128 : 0.0f;  // not a softmax
}
"""


def build(tmp, name, source):
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("g++ not found")
    src = tmp / f"{name}.cpp"
    src.write_text(source)
    lib = tmp / f"{name}.so"
    c = subprocess.run([cxx, "-O2", "-fPIC", "-shared", "-fopenmp", "-o", str(lib), str(src)], capture_output=True,
                       text=True, cwd=tmp, timeout=120)
    assert c.returncode == 0, c.stderr
    return lib


def peers(tmp, *args):
    return subprocess.run([sys.executable, str(PEERS_PY), "--spec", str(SPEC), "--inputs", str(tmp / "in0.npy"),
                           "--peers", "numpy", "--min-seconds", "0.01", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def answer(tmp_path_factory):
    require_axon()
    tmp = tmp_path_factory.mktemp("peers_kernels")
    r = subprocess.run([str(AXON_BIN), "compile", str(SPEC), "-o", str(tmp)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    right = build(tmp, "right", (tmp / "kernel.cpp").read_text())
    wrong = build(tmp, "wrong", WRONG)
    np.save(tmp / "in0.npy", np.random.default_rng(5).standard_normal((64, 128)))
    r = peers(tmp, "--kernel", f"right={right}:small_softmax", "--kernel", f"wrong={wrong}:small_softmax",
              "--interleave-rounds", "3", "--burst-seconds", "0.005", "--out", tmp / "peers.json")
    assert r.returncode == 0, r.stderr
    return {"tmp": tmp, "json": json.loads((tmp / "peers.json").read_text()), "right": right}


def test_a_right_kernel_is_checked_timed_and_interleaved(answer):
    k = answer["json"]["kernels"]["right"]
    assert k["status"] == "ok", k
    assert k["median_ms"] > 0 and k["copies"] >= 1
    assert k["max_diff_vs_numpy"] < 1e-5  # no budget given: within rtol 1e-3 of numpy's scale passes
    assert k["interleaved_ms"] > 0 and len(k["burst_ms"]) == 3
    assert k["interleaved_ms"] == pytest.approx(sorted(k["burst_ms"])[1], rel=1e-12)
    numpy = answer["json"]["peers"]["numpy"]
    assert numpy["interleaved_ms"] > 0 and len(numpy["burst_ms"]) == 3


def test_each_burst_starts_after_a_quiet_gap(answer):
    assert answer["json"]["interleave"]["burst_gap"] == 0.15  # the default
    tmp = answer["tmp"]
    t0 = time.perf_counter()
    r = peers(tmp, "--kernel", f"right={answer['right']}:small_softmax", "--interleave-rounds", "3",
              "--burst-seconds", "0.001", "--burst-gap", "0.3", "--out", tmp / "gap.json")
    elapsed = time.perf_counter() - t0
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp / "gap.json").read_text())["interleave"]["burst_gap"] == 0.3
    assert elapsed >= 3 * 2 * 0.3  # 3 rounds of 2 bursts (numpy, right), each after 0.3 s


def test_a_wrong_kernel_is_reported_and_never_timed(answer):
    k = answer["json"]["kernels"]["wrong"]
    assert k["status"].startswith("wrong result: output 0"), k
    assert "median_ms" not in k and "interleaved_ms" not in k
    assert answer["json"]["interleave"]["order"] == ["numpy", "right"]


def test_a_kernel_may_not_take_a_peers_name(answer):
    r = peers(answer["tmp"], "--kernel", f"numpy={answer['right']}:small_softmax")
    assert r.returncode != 0 and "is a peer's name" in r.stderr


def test_a_malformed_kernel_argument_says_what_is_expected(answer):
    r = peers(answer["tmp"], "--kernel", "right.so")
    assert r.returncode != 0 and "NAME=LIB.so:SYMBOL" in r.stderr


def test_a_missing_symbol_is_a_failure_row(answer):
    r = peers(answer["tmp"], "--kernel", f"right={answer['right']}:no_such_entry", "--out", answer["tmp"] / "p2.json")
    assert r.returncode == 0, r.stderr
    k = json.loads((answer["tmp"] / "p2.json").read_text())["kernels"]["right"]
    assert k["status"].startswith("failed: AttributeError"), k


def test_kernel_buffers_start_where_kernel_offset_says():
    sys.path.insert(0, str(PEERS_PY.parent))
    import peers as peers_module
    for offset in (0, 16, 1032):
        for a in (np.arange(37, dtype=np.float32), np.ones((5, 3), dtype=np.float64)):
            placed = peers_module.placed_array(a, offset)
            assert placed.ctypes.data % 4096 == offset
            assert placed.flags["C_CONTIGUOUS"] and placed.dtype == a.dtype and np.array_equal(placed, a)


def test_a_misplaced_kernel_is_still_checked_and_a_bad_offset_is_refused(answer):
    tmp = answer["tmp"]
    r = peers(tmp, "--kernel", f"right={answer['right']}:small_softmax", "--kernel-offset", "16", "--out",
              tmp / "offset.json")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp / "offset.json").read_text())["kernels"]["right"]["status"] == "ok"
    r = peers(tmp, "--kernel", f"right={answer['right']}:small_softmax", "--kernel-offset", "5")
    assert r.returncode != 0 and "--kernel-offset 5" in r.stderr


TRIAD = """
#include <stdint.h>
extern "C" void triad(float* a, const float* b, const float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + K * c[i];
}
"""


def test_the_stream_triad_is_checked_and_takes_its_turn_in_every_round(answer):
    tmp = answer["tmp"]
    right = build(tmp, "triad", TRIAD.replace("K", "3.0f"))
    n = 1 << 20
    r = peers(tmp, "--kernel", f"right={answer['right']}:small_softmax", "--interleave-rounds", "3",
              "--burst-seconds", "0.005", "--burst-gap", "0.01", "--stream", f"{right}:triad", "--stream-elements", n,
              "--out", tmp / "stream.json")
    assert r.returncode == 0, r.stderr
    j = json.loads((tmp / "stream.json").read_text())
    assert j["interleave"]["order"] == ["numpy", "right", "stream"]
    s = j["stream"]
    assert s["status"] == "ok", s
    assert s["elements"] == n and s["bytes_per_call"] == 12 * n
    assert len(s["burst_ms"]) == 3 and len(s["burst_gbs"]) == 3
    assert s["interleaved_ms"] == pytest.approx(sorted(s["burst_ms"])[1], rel=1e-12)
    assert s["gbs"] == pytest.approx(12 * n / (s["interleaved_ms"] * 1e6), rel=1e-12)
    for ms, gbs in zip(s["burst_ms"], s["burst_gbs"]):
        assert gbs == pytest.approx(12 * n / (ms * 1e6), rel=1e-12)


def test_a_wrong_triad_is_reported_and_never_interleaved(answer):
    tmp = answer["tmp"]
    wrong = build(tmp, "triad_wrong", TRIAD.replace("K", "2.0f"))
    r = peers(tmp, "--kernel", f"right={answer['right']}:small_softmax", "--interleave-rounds", "2",
              "--burst-seconds", "0.001", "--burst-gap", "0.01", "--stream", f"{wrong}:triad", "--stream-elements",
              4096, "--out", tmp / "stream_wrong.json")
    assert r.returncode == 0, r.stderr
    j = json.loads((tmp / "stream_wrong.json").read_text())
    assert j["stream"]["status"] == "wrong result: a != b + 3 c", j["stream"]
    assert "interleaved_ms" not in j["stream"] and j["interleave"]["order"] == ["numpy", "right"]


def test_stream_is_reserved_and_its_length_must_be_positive(answer):
    r = peers(answer["tmp"], "--kernel", f"stream={answer['right']}:small_softmax")
    assert r.returncode != 0 and "is the name of --stream" in r.stderr
    r = peers(answer["tmp"], "--stream", f"{answer['right']}:triad", "--stream-elements", 0)
    assert r.returncode != 0 and "--stream-elements 0" in r.stderr


def test_a_kernel_with_a_0d_output_is_checked_as_0d(tmp_path):
    """A whole-tensor reduction returns a 0-d array; the kernel's output buffer
    must keep numpy's shape () (it was reported as (1,) and refused)."""
    require_axon()
    spec = SOURCE_DIR / "tests" / "bench" / "specs" / "mean_square.py"
    r = subprocess.run([str(AXON_BIN), "compile", str(spec), "-o", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lib = build(tmp_path, "mean_square", (tmp_path / "kernel.cpp").read_text())
    np.save(tmp_path / "in0.npy", np.random.default_rng(7).standard_normal((64, 128)))
    r = subprocess.run([sys.executable, str(PEERS_PY), "--spec", str(spec), "--inputs", str(tmp_path / "in0.npy"),
                        "--peers", "numpy", "--min-seconds", "0.01", "--kernel", f"axon={lib}:mean_square",
                        "--out", str(tmp_path / "p.json")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    k = json.loads((tmp_path / "p.json").read_text())["kernels"]["axon"]
    assert k["status"] == "ok", k
    assert k["max_diff_vs_numpy"] < 1e-5
    sys.path.insert(0, str(PEERS_PY.parent))
    import peers as peers_module
    assert peers_module.placed_array(np.float32(2.5), 16).shape == ()
