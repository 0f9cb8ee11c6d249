"""`axon optimize` end to end on small workloads (docs/optimize.md).

Each workload is optimized once, with a short budget and a temporary
tuning database; the tests then read what it wrote: the files, the fields of
report.json and their consistency, a second run that must answer from the
database in under a second, and the emitted kernel compiled on its own with
g++ and judged by `axon verify`.
"""

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import sys
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import EXIT_OK, EXIT_USER_ERROR, SOURCE_DIR, run_axon  # noqa: E402

SPECS = Path(__file__).resolve().parent / "specs"
WORKLOADS = ["small_matmul", "small_softmax", "small_gelu"]
STOP_REASONS = {"budget", "trials", "space exhausted", "interrupted", "database"}


def optimize(spec, out, db, *extra):
    return run_axon(["optimize", spec, "-o", out, "--db", db, "--budget", "8", "--trials", "6", "--seed", "3",
                     *extra], timeout=120)


@pytest.fixture(scope="module", params=WORKLOADS)
def optimized(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(request.param)
    spec = SPECS / f"{request.param}.py"
    db = tmp / "tuning.sqlite"
    r = optimize(spec, tmp / "out", db)
    assert r.returncode == EXIT_OK, r.stderr
    return {"name": request.param, "spec": spec, "db": db, "out": tmp / "out", "tmp": tmp, "stderr": r.stderr,
            "report": json.loads((tmp / "out" / "report.json").read_text())}


def test_files_written(optimized):
    for f in ["kernel.cpp", "kernel.h", "report.md", "report.json"]:
        assert (optimized["out"] / f).stat().st_size > 0, f


def test_progress_line_on_stderr(optimized):
    lines = [ln for ln in optimized["stderr"].replace("\r", "\n").splitlines() if ln.startswith("tried ")]
    assert lines, optimized["stderr"]
    for word in ["compiled", "verified", "best", "speedup"]:
        assert word in lines[-1]


def test_report_fields_consistent(optimized):
    r = optimized["report"]
    for k in ["spec", "entry", "target", "time_ms", "speedup_vs_naive", "roofline", "verification", "schedule",
              "search"]:
        assert k in r, k
    assert r["entry"] == optimized["name"]
    assert r["time_ms"]["axon"] > 0 and r["time_ms"]["naive"] > 0
    assert r["speedup_vs_naive"] == pytest.approx(r["time_ms"]["naive"] / r["time_ms"]["axon"], rel=1e-9)
    rf = r["roofline"]
    assert rf["flops"] > 0 and rf["bytes"] > 0 and rf["floor_ms"] >= 0
    assert rf["fraction"] <= 1 or rf["fraction_above_one"]
    assert r["verification"]["inputs_tried"] >= 1
    assert r["verification"]["max_error_over_budget"] <= 1
    s = r["search"]
    assert s["stop_reason"] in STOP_REASONS - {"database", "interrupted"}
    assert s["verified"] <= s["compiled"] <= s["candidates"] <= 6
    assert "fingerprint" in r["target"] or "name" in r["target"]


def test_final_round_picks_the_reported_kernel(optimized):
    # The close finalists are timed again side by side; the report's time and
    # schedule are the final round's winner's, unless the naive kernel won.
    r = optimized["report"]
    # Up to 4 seats by search time (within 1.3x of the fastest), then up to 2
    # for the cost model's favourites whatever their search time.
    f = r["search"]["final_round"]
    assert f["timed"] == len(f["candidates"]) <= 6
    if f["timed"] == 0 or r["variant"] == "naive":
        return
    seats = [c["seat"] for c in f["candidates"]]
    by_time = seats.count("search time")
    assert 1 <= by_time <= 4 and seats.count("cost model") <= 2
    assert seats == ["search time"] * by_time + ["cost model"] * (len(seats) - by_time)
    fastest_search = min(c["search_ms"] for c in f["candidates"])
    for c in f["candidates"]:
        assert c["ms"] > 0
        if c["seat"] == "search time":
            assert c["search_ms"] <= 1.3 * fastest_search
    (w,) = [c for c in f["candidates"] if c["winner"]]
    assert w["ms"] == min(c["ms"] for c in f["candidates"])
    assert r["time_ms"]["axon"] == w["ms"]
    assert r["schedule"] == w["schedule"]


def test_search_times_are_anchored(optimized):
    # The first batch's fastest verified kernel is timed again beside every
    # later batch, which scales their times (docs/optimize.md step 5a).
    s = optimized["report"]["search"]
    a = s["anchor"]
    if s["verified"] == 0:
        assert a["set"] is False
        return
    assert a["set"] is True and a["first_ms"] > 0
    assert 0 < a["fastest"] <= a["slowest"]
    # Batches of two: at most one anchored batch per two candidates after the first batch.
    assert 0 <= a["batches"] <= (s["candidates"] + 1) // 2 - 1
    assert "timing anchor" in (optimized["out"] / "report.md").read_text()


def test_second_run_answers_from_database(optimized):
    out2 = optimized["tmp"] / "out2"
    t0 = time.monotonic()
    r = optimize(optimized["spec"], out2, optimized["db"])
    elapsed = time.monotonic() - t0
    assert r.returncode == EXIT_OK, r.stderr
    rep = json.loads((out2 / "report.json").read_text())
    assert rep["search"]["stop_reason"] == "database"
    assert elapsed < 1.0, f"answer from the database took {elapsed:.2f} s"
    assert rep["schedule"] == optimized["report"]["schedule"]
    assert (out2 / "kernel.cpp").read_text() == (optimized["out"] / "kernel.cpp").read_text()


def test_kernel_compiles_standalone_and_passes_verify(optimized):
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("g++ not found")
    out = optimized["out"]
    lib = optimized["tmp"] / "standalone.so"
    c = subprocess.run([cxx, "-std=c++17", "-O2", "-march=native", "-fopenmp", "-fPIC", "-shared", "-o", str(lib),
                        str(out / "kernel.cpp")], capture_output=True, text=True, cwd=out, timeout=120)
    assert c.returncode == 0, c.stderr
    v = run_axon(["verify", optimized["spec"], out / "kernel.cpp", "--no-sanitizer", "--no-time"], timeout=120)
    assert v.returncode == EXIT_OK, v.stdout + v.stderr


def test_resume_continues(tmp_path):
    spec = SPECS / "small_matmul.py"
    db = tmp_path / "db.sqlite"
    assert optimize(spec, tmp_path / "a", db).returncode == EXIT_OK
    r = optimize(spec, tmp_path / "b", db, "--resume")
    assert r.returncode == EXIT_OK, r.stderr
    rep = json.loads((tmp_path / "b" / "report.json").read_text())
    assert rep["search"]["stop_reason"] != "database"
    assert rep["search"]["resumed_from"] >= 1


def test_no_db_writes_nothing(tmp_path):
    db = tmp_path / "never.sqlite"
    r = run_axon(["optimize", SPECS / "small_gelu.py", "-o", tmp_path / "o", "--db", db, "--no-db", "--trials", "2",
                  "--budget", "5"], timeout=120)
    assert r.returncode == EXIT_OK, r.stderr
    assert not db.exists()


def test_bad_target_file_names_the_field(tmp_path):
    bad = tmp_path / "t.json"
    bad.write_text('{"cores": "many"}')
    r = run_axon(["optimize", SPECS / "small_gelu.py", "-o", tmp_path / "o", "--target", bad, "--no-db"])
    assert r.returncode == EXIT_USER_ERROR
    assert "cores" in r.stderr


def test_unwritable_output_names_the_path(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = run_axon(["optimize", SPECS / "small_gelu.py", "-o", blocker / "sub", "--no-db"])
    assert r.returncode == EXIT_USER_ERROR
    assert str(blocker / "sub") in r.stderr


def test_compile_with_the_reports_schedule_rebuilds_its_kernel(optimized):
    # `axon compile --schedule report.json` reproduces optimize's kernel byte for
    # byte, or refuses, naming the rule, when the winner came from a rewrite.
    out = optimized["tmp"] / "from_schedule"
    r = run_axon(["compile", optimized["spec"], "-o", out, "--schedule", optimized["out"] / "report.json"])
    applied = optimized["report"]["rewrites"].get("applied", [])
    if applied:
        assert r.returncode == EXIT_USER_ERROR
        assert applied[0]["rule"] in r.stderr and "rewritten graph" in r.stderr
        return
    assert r.returncode == EXIT_OK, r.stderr
    assert (out / "kernel.cpp").read_text() == (optimized["out"] / "kernel.cpp").read_text()


def host_has_avx512():
    r = run_axon(["target", "--no-probe", "--json"])
    assert r.returncode == EXIT_OK, r.stderr
    return json.loads(r.stdout)["isa"]["avx512f"]


def test_compile_with_a_schedule_object_passes_verify(tmp_path):
    # Knobs left out take their defaults; mc = 48 is rounded up to whole 14-row
    # tiles. The register tile must fit the host's registers: 14 rows of one
    # 16-wide zmm vector (of 32 registers), or of one 8-wide ymm (of 16).
    nr = 16 if host_has_avx512() else 8
    sched = json.dumps({"k0.gemm.mr": 14, "k0.gemm.nr": nr, "k0.gemm.mc": 48})
    r = run_axon(["compile", SPECS / "small_matmul.py", "-o", tmp_path, "--schedule", sched, "--json"])
    assert r.returncode == EXIT_OK, r.stderr
    got = json.loads(r.stdout)["schedule"]
    assert got["k0.gemm.mr"] == 14 and got["k0.gemm.nr"] == nr and "k0.gemm.kc" in got
    src = (tmp_path / "kernel.cpp").read_text()
    # The GEMM's tile program names its blocking in its first comment.
    assert f"tile 14x{nr}," in src and ", mc 56," in src
    v = run_axon(["verify", SPECS / "small_matmul.py", tmp_path / "kernel.cpp", "--no-sanitizer", "--no-time"],
                 timeout=120)
    assert v.returncode == EXIT_OK, v.stdout + v.stderr


@pytest.mark.parametrize("sched, words", [
    ('{"k0.nope": 1}', ["k0.nope", "k0.gemm.mr"]),
    ('{"k0.gemm.mr": 3}', ["illegal", "k0.gemm.mr = 3"]),
    ('{"k0.gemm.mr": 1.5}', ["k0.gemm.mr", "integer"]),
    ('{"k0.gemm.mr": ', ["not valid JSON"]),
    ("no/such/schedule.json", ["cannot read", "no/such/schedule.json"]),
])
def test_compile_with_a_bad_schedule_says_why(tmp_path, sched, words):
    r = run_axon(["compile", SPECS / "small_matmul.py", "-o", tmp_path, "--schedule", sched])
    assert r.returncode == EXIT_USER_ERROR, r.stdout + r.stderr
    for w in words:
        assert w in r.stderr, (w, r.stderr)
    assert not (tmp_path / "kernel.cpp").exists()


def test_database_answer_for_a_wide_elementwise_graph_is_not_rechecked(tmp_path):
    # The re-check interprets the graph in float64 at about 100 ns per
    # element of an elementwise op; 1 M elements through 8 ops would take
    # most of the second the answer has, so the stored row is trusted.
    spec = SPECS / "wide_gelu.py"
    db = tmp_path / "db.sqlite"
    first = run_axon(["optimize", spec, "-o", tmp_path / "a", "--db", db, "--budget", "5", "--trials", "2"],
                     timeout=300)
    assert first.returncode == EXIT_OK, first.stderr
    t0 = time.monotonic()
    r = run_axon(["optimize", spec, "-o", tmp_path / "b", "--db", db], timeout=120)
    elapsed = time.monotonic() - t0
    assert r.returncode == EXIT_OK, r.stderr
    rep = json.loads((tmp_path / "b" / "report.json").read_text())
    assert rep["search"]["stop_reason"] == "database"
    assert rep["verification"]["rechecked"] is False
    assert elapsed < 1.0, f"answer from the database took {elapsed:.2f} s"
