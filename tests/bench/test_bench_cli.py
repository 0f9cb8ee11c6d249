"""`axon bench` end to end on one small workload (docs/bench.md).

One run, shared by the tests: a tiny search budget, no tuning database,
numpy as the only real peer, torch hidden (AXON_PEERS_HIDE, as if it were
not installed) and a bogus peer name. The tests read what it wrote: the
files exist, the numbers parse and are positive, and the two peers that
could not run keep their rows with a status instead of being dropped.
"""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import AXON_BIN, EXIT_OK, EXIT_USER_ERROR, SOURCE_DIR, require_axon  # noqa: E402

SPEC = SOURCE_DIR / "tests" / "optimize" / "specs" / "small_softmax.py"
PEERS = ["numpy", "torch", "bogus"]


def bench(out, *args, env_extra=None):
    require_axon()
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run([str(AXON_BIN), "bench", *map(str, args), "-o", str(out)], capture_output=True,
                          text=True, timeout=120, cwd=SOURCE_DIR, env=env)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    r = bench(out, SPEC, "--budget", "2", "--no-db", "--peers", ",".join(PEERS), "--min-seconds", "0.02",
              env_extra={"AXON_PEERS_HIDE": "torch"})
    assert r.returncode == EXIT_OK, r.stderr
    return {"out": out, "stderr": r.stderr, "json": json.loads((out / "bench.json").read_text())}


def test_files_written(run):
    for f in ["bench.md", "bench.csv", "bench.json"]:
        assert (run["out"] / f).stat().st_size > 0, f
    md = (run["out"] / "bench.md").read_text()
    assert "| small_softmax |" in md
    # Either the plot is there or bench.md says why it is not.
    assert (run["out"] / "bench.png").exists() or "plot: not written" in md


def test_progress_on_stderr(run):
    lines = [ln for ln in run["stderr"].splitlines() if ln.startswith("bench: ")]
    assert any("probe:" in ln for ln in lines), run["stderr"]
    assert any(ln.startswith("bench: small_softmax: axon ") for ln in lines), run["stderr"]


def test_probe_and_numbers_positive(run):
    b = run["json"]
    assert b["finished"] is True
    assert b["probe"]["stream_gbs_all"] > 0 and b["probe"]["fma_gflops_all"] > 0
    # Cold rotation = the stream probe's working set: 3 x max(64 MiB, twice the LLC), at most a
    # sixteenth of the memory but never below twice the LLC.
    llc2 = 2 * b["last_level_cache_bytes"]
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert b["cold_bytes"] == pytest.approx(min(3 * max(64 << 20, llc2), max(llc2, memory / 16)), rel=1e-9)
    (w,) = b["workloads"]
    assert w["name"] == "small_softmax" and "error" not in w
    assert w["flops"] > 0 and w["bytes"] > 0 and w["floor_ms"] > 0
    for k in ["axon", "naive"]:
        assert w[k]["status"] == "ok", w[k]
        assert w[k]["ms"] > 0 and w[k]["copies"] >= 2
        f = w[k]["fraction"]
        assert f["roofline"] > 0 and f["bandwidth"] > 0 and f["fma"] > 0
        # floor = max(flops / FMA peak, bytes / bandwidth), so its fraction is the larger one
        assert f["roofline"] == pytest.approx(max(f["bandwidth"], f["fma"]), rel=1e-6)
        # softmax writes as much as it reads: the loop nearest its mix is the streaming copy,
        # never faster than the best ceiling, so its fraction is at least the plain one.
        assert f["bandwidth_of_mix"] >= f["bandwidth"] * (1 - 1e-9)
    assert w["bytes_written"] == pytest.approx(w["bytes"] / 2, rel=1e-9)
    assert w["mix_ceiling"]["write_share"] == pytest.approx(0.5, rel=1e-9)
    assert w["mix_ceiling"]["loop"] == "streaming copy" or b["probe"]["nt_copy_gbs_all"] == 0
    a = w["axon"]
    assert a["ms_before_peers"] > 0 and a["ms_after_peers"] > 0
    assert a["ms"] == max(a["ms_before_peers"], a["ms_after_peers"])  # A/B/A: the slower one counts
    numpy = w["peers"]["numpy"]
    assert numpy["status"] == "ok", numpy
    assert numpy["median_ms"] > 0 and numpy["copies"] >= 2
    assert w["best_peer"] == "numpy"
    assert w["speedup_vs_best_peer"] == pytest.approx(numpy["median_ms"] / w["axon"]["ms"], rel=1e-9)


def test_interleaved_bursts_compare_axon_and_the_peers_in_one_process(run):
    # axon's kernel is loaded into peers.py, checked against numpy, and timed
    # in turns with every peer that passed; the last column is that ratio.
    b = run["json"]
    assert b["interleave_rounds"] == 7
    assert b["burst_seconds"] == 0.03 and b["burst_gap_s"] == 0.15
    assert "at least 3 calls and 0.03 s, each after 0.15 s of sleep" in (run["out"] / "bench.md").read_text()
    (w,) = b["workloads"]
    ax = w["axon"]["in_peers_process"]
    assert ax["status"] == "ok", ax
    numpy = w["peers"]["numpy"]
    assert ax["interleaved_ms"] > 0 and numpy["interleaved_ms"] > 0
    assert len(ax["interleaved_round_ms"]) == len(numpy["interleaved_round_ms"]) == 1
    assert "interleaved_ms" not in w["peers"]["torch"]  # not installed, so not interleaved
    i = w["interleaved"]
    assert i["best_peer"] == "numpy" and i["axon_ms"] == ax["interleaved_ms"]
    assert i["speedup_vs_best_peer"] == pytest.approx(numpy["interleaved_ms"] / ax["interleaved_ms"], rel=1e-9)
    assert i["axon_fraction"]["roofline"] == pytest.approx(w["floor_ms"] / ax["interleaved_ms"], rel=1e-6)
    (row,) = csv.DictReader((run["out"] / "bench.csv").open())
    assert row["best_peer_interleaved"] == "numpy"
    assert float(row["speedup_vs_best_peer_interleaved"]) == pytest.approx(i["speedup_vs_best_peer"], rel=1e-3)
    md = (run["out"] / "bench.md").read_text()
    assert "interleaved: speedup vs best peer" in md
    assert f"{i['speedup_vs_best_peer']:.2f}x (numpy) |" in md


def test_bandwidth_fractions_pair_axon_with_the_triad_of_the_same_round(run):
    # The probe's triad, compiled by axon, takes its turn in every interleaved
    # round; axon's fraction of it pairs each of axon's bursts with the
    # triad's burst of the same round.
    b = run["json"]
    assert b["stream_kernel"]["status"] == "ok", b["stream_kernel"]
    (w,) = b["workloads"]
    i = w["interleaved"]
    s = i["stream"]
    assert s["status"] == "ok", s
    assert s["elements"] == b["stream_kernel"]["elements"] and s["elements"] * 12 <= b["cold_bytes"]
    assert s["gbs"] > 0 and len(s["round_gbs"]) == 1
    (triad,), (axon,) = s["round_burst_ms"], i["axon_round_burst_ms"]
    assert len(triad) == len(axon) == b["interleave_rounds"]
    ratios = sorted((w["bytes"] / a) / (s["bytes_per_call"] / t) for a, t in zip(axon, triad))
    assert i["axon_stream_fraction"] == pytest.approx(ratios[len(ratios) // 2], rel=1e-9)  # 7 bursts: the middle
    assert i["best_peer_stream_fraction"] > 0
    (row,) = csv.DictReader((run["out"] / "bench.csv").open())
    assert float(row["axon_fraction_stream_interleaved"]) == pytest.approx(i["axon_stream_fraction"], rel=1e-3)
    assert float(row["stream_gbs_interleaved"]) == pytest.approx(s["gbs"], rel=1e-3)
    md = (run["out"] / "bench.md").read_text()
    assert f"| {i['axon_stream_fraction']:.2f} of {s['gbs']:.1f} GB/s |" in md
    assert "paired burst by burst" in md


def test_peers_run_on_every_cpu_axon_started_with(run):
    # OpenMP pins the thread that times axon's kernels to one core; peers.py,
    # started after that, must not inherit the pin (it once did).
    (w,) = run["json"]["workloads"]
    assert w["peers_cpus"] == sorted(os.sched_getaffinity(0))


def test_the_roofline_uses_the_better_of_two_probes(run):
    # Probed at the start and at the end of the run; each peak is the better
    # of the two, and every floor and fraction is computed from those.
    b = run["json"]
    s, e, p = b["probe_start"], b["probe_end"], b["probe"]
    for k in ["fma_gflops_1t", "fma_gflops_all", "stream_gbs_1t", "stream_gbs_all", "read_gbs_all",
              "nt_copy_gbs_all", "nt_triad_gbs_all"]:
        assert s[k] > 0 and e[k] > 0 and p[k] == max(s[k], e[k]), k
    # The bandwidth term is the ceiling: the best real traffic of the probe's
    # loops, the plain triad counted at the 16 bytes per element it moves.
    ceiling = max(p["stream_gbs_all"] * 16 / 12, p["read_gbs_all"], p["nt_copy_gbs_all"], p["nt_triad_gbs_all"])
    assert p["bandwidth_ceiling_gbs"] == pytest.approx(ceiling, rel=1e-12)
    (w,) = b["workloads"]
    floor = 1e3 * max(w["flops"] / (p["fma_gflops_all"] * 1e9), w["bytes"] / (ceiling * 1e9))
    assert w["floor_ms"] == pytest.approx(floor, rel=1e-9)
    assert w["axon"]["fraction"]["roofline"] == pytest.approx(floor / w["axon"]["ms"], rel=1e-9)
    numpy = w["peers"]["numpy"]
    assert numpy["fraction"]["roofline"] == pytest.approx(floor / numpy["median_ms"], rel=1e-9)
    assert "and at the end" in (run["out"] / "bench.md").read_text()


def test_missing_peers_are_reported_not_dropped(run):
    (w,) = run["json"]["workloads"]
    assert set(PEERS) <= set(w["peers"])
    assert w["peers"]["torch"]["status"] == "not installed"
    assert w["peers"]["bogus"]["status"].startswith("unknown peer")
    md = (run["out"] / "bench.md").read_text()
    assert "not installed" in md and "unknown peer" in md
    for p in PEERS:
        assert f"{p} ms" in md


def test_csv_parses(run):
    rows = list(csv.DictReader((run["out"] / "bench.csv").open()))
    assert len(rows) == 1
    row = rows[0]
    assert row["workload"] == "small_softmax"
    for k in ["flops", "bytes", "floor_ms", "axon_ms", "naive_ms", "numpy_ms", "axon_fraction_roofline",
              "axon_fraction_bandwidth", "axon_fraction_fma", "stream_gbs", "fma_gflops", "mix_ceiling_gbs",
              "axon_fraction_bandwidth_of_mix"]:
        assert float(row[k]) > 0, k
    assert row["torch_status"] == "not installed" and row["torch_ms"] == ""
    assert row["bogus_status"].startswith("unknown peer")


def test_unreadable_workload_is_a_user_error(tmp_path):
    r = bench(tmp_path / "out", tmp_path / "missing.py", "--peers", "none")
    assert r.returncode == EXIT_USER_ERROR
    assert "cannot read the workload" in r.stderr


def test_csv_fractions_match_the_json(run):
    # The CSV keeps significant digits, so a fraction far below 1e-4 (a softmax against the FMA peak) is not 0.
    (row,) = csv.DictReader((run["out"] / "bench.csv").open())
    f = run["json"]["workloads"][0]["axon"]["fraction"]
    for k in ["roofline", "bandwidth", "fma"]:
        assert float(row[f"axon_fraction_{k}"]) == pytest.approx(f[k], rel=1e-3), k


def test_rewrites_ablation_times_both_winners_side_by_side(tmp_path):
    # (A@B)@C with a thin C: the proved reassociation does 64x fewer FLOPs, so the
    # winner with rewrites must be measurably faster than the one without.
    spec = SOURCE_DIR / "tests" / "optimize" / "specs" / "small_chain.py"
    r = bench(tmp_path, spec, "--budget", "8", "--no-db", "--peers", "none", "--min-seconds", "0.02",
              "--ablate-rewrites")
    assert r.returncode == EXIT_OK, r.stderr
    b = json.loads((tmp_path / "bench.json").read_text())
    assert b["ablate_rewrites"] is True
    (w,) = b["workloads"]
    assert w["axon"]["status"] == "ok" and w["axon_no_rewrites"]["status"] == "ok"
    assert "reassociate" in w["optimize"]["rewrites_applied"]
    assert w["optimize_no_rewrites"]["rewrites_applied"] == []
    assert w["rewrites_speedup"] == pytest.approx(w["axon_no_rewrites"]["ms"] / w["axon"]["ms"], rel=1e-9)
    assert w["rewrites_speedup"] > 1.3, w
    (row,) = csv.DictReader((tmp_path / "bench.csv").open())
    assert float(row["rewrites_speedup"]) == pytest.approx(w["rewrites_speedup"], rel=1e-3)
    assert row["rewrites_applied"] == " + ".join(w["optimize"]["rewrites_applied"])
    md = (tmp_path / "bench.md").read_text()
    assert "## Rewrites ablation" in md and "| small_chain |" in md.split("## Rewrites ablation")[1]


def test_rounds_report_the_median_of_round_medians(tmp_path):
    # --rounds 3: the peers and axon's second timing repeat three times; axon
    # has four round medians (the first before any peer), numpy three, and
    # each reported time is the median of its own.
    r = bench(tmp_path, SPEC, "--budget", "2", "--no-db", "--peers", "numpy", "--min-seconds", "0.02",
              "--rounds", "3")
    assert r.returncode == EXIT_OK, r.stderr
    assert sum("round 3 of 3" in ln for ln in r.stderr.splitlines()) == 1, r.stderr
    b = json.loads((tmp_path / "bench.json").read_text())
    assert b["rounds"] == 3
    (w,) = b["workloads"]
    a, n = w["axon"], w["peers"]["numpy"]
    assert len(a["round_ms"]) == 4 and len(n["round_ms"]) == 3
    assert a["ms"] == pytest.approx(sum(sorted(a["round_ms"])[1:3]) / 2, rel=1e-12)
    assert n["median_ms"] == pytest.approx(sorted(n["round_ms"])[1], rel=1e-12)
    assert a["ms_before_peers"] == a["round_ms"][0] and a["ms_after_peers"] == a["round_ms"][-1]
    assert w["speedup_vs_best_peer"] == pytest.approx(n["median_ms"] / a["ms"], rel=1e-9)
    assert "3 rounds of peers then axon" in (tmp_path / "bench.md").read_text()
    # Each round's peers run interleaves too; the reported time is the median of the three.
    ax = w["axon"]["in_peers_process"]
    assert len(ax["interleaved_round_ms"]) == 3 and len(n["interleaved_round_ms"]) == 3
    assert ax["interleaved_ms"] == pytest.approx(sorted(ax["interleaved_round_ms"])[1], rel=1e-12)
    # The triad's fraction pairs the bursts of all three peers runs (3 x 7).
    i = w["interleaved"]
    assert len(i["stream"]["round_gbs"]) == 3 and i["stream"]["gbs"] == sorted(i["stream"]["round_gbs"])[1]
    pairs = [(a, t) for ar, tr in zip(i["axon_round_burst_ms"], i["stream"]["round_burst_ms"]) for a, t in zip(ar, tr)]
    assert len(pairs) == 21
    ratios = sorted((w["bytes"] / a) / (i["stream"]["bytes_per_call"] / t) for a, t in pairs)
    assert i["axon_stream_fraction"] == pytest.approx(ratios[10], rel=1e-9)


def test_interleave_zero_times_no_bursts(tmp_path):
    r = bench(tmp_path, SPEC, "--budget", "2", "--no-db", "--peers", "numpy", "--min-seconds", "0.02",
              "--interleave", "0")
    assert r.returncode == EXIT_OK, r.stderr
    (w,) = json.loads((tmp_path / "bench.json").read_text())["workloads"]
    assert "interleaved" not in w and "in_peers_process" not in w["axon"]
    assert "interleaved_ms" not in w["peers"]["numpy"]


def test_rounds_out_of_range_is_a_usage_error(tmp_path):
    r = bench(tmp_path, SPEC, "--peers", "none", "--rounds", "0")
    assert r.returncode == EXIT_USER_ERROR, r.stderr


def test_a_workload_that_crashes_keeps_its_row_and_the_bench_goes_on(tmp_path):
    """Each workload runs in a process of its own: the first one's search
    dies of SIGSEGV (its naive kernel, through AXON_TEST_NAIVE_KERNEL), its
    row says so, and the next workload is measured. Before, `axon bench`
    itself died with the signal and wrote no row after it."""
    crash = SOURCE_DIR / "tests" / "bench" / "kernels" / "segfault_scale.cpp"
    first = SOURCE_DIR / "tests" / "optimize" / "specs" / "tanh_scale.py"
    r = bench(tmp_path, first, SPEC, "--budget", "1", "--no-db", "--peers", "none", "--min-seconds", "0.02",
              env_extra={"AXON_TEST_NAIVE_KERNEL": str(crash)})
    assert r.returncode == EXIT_OK, r.stderr
    b = json.loads((tmp_path / "bench.json").read_text())
    assert b["finished"] is True
    crashed, measured = b["workloads"]
    assert crashed["name"] == "tanh_scale" and "signal 11 (SIGSEGV)" in crashed["error"], crashed
    # The naive kernel the override names has no softmax entry: that workload's
    # search warns and goes on; its row is measured.
    assert measured["name"] == "small_softmax" and "error" not in measured, measured
    assert measured["axon"]["status"] == "ok" and measured["axon"]["ms"] > 0, measured["axon"]
    assert "tanh_scale" in (tmp_path / "bench.md").read_text()


def test_optimize_with_peers_prints_them_side_by_side(tmp_path):
    """`axon optimize --peers`: the search's winner, the naive kernel and the
    peers timed and checked in one run, without a second search."""
    require_axon()
    r = subprocess.run([str(AXON_BIN), "optimize", str(SPEC), "-o", str(tmp_path), "--budget", "2", "--no-db",
                        "--peers", "numpy,bogus"], capture_output=True, text=True, timeout=180, cwd=SOURCE_DIR)
    assert r.returncode == EXIT_OK, r.stderr
    assert "optimizing (budget" not in r.stderr  # the bench took the search's result
    rows = {ln.split()[0]: ln for ln in r.stdout.splitlines() if ln.startswith("  ") and ln.split()}
    b = json.loads((tmp_path / "bench" / "bench.json").read_text())["workloads"][0]
    for name in ["naive", "axon", "numpy"]:
        assert name in rows, r.stdout
    assert "yes: largest error" in rows["axon"] and "yes: largest error" in rows["naive"], r.stdout
    # The table's numbers are the bench's.
    assert float(rows["axon"].split()[1]) == pytest.approx(b["axon"]["ms"], rel=1e-3)
    assert b["peers"]["bogus"]["status"] != "ok" and "bogus" in rows
    if b["peers"]["numpy"]["status"] == "ok":
        assert "yes: largest error" in rows["numpy"]
    assert (tmp_path / "kernel.cpp").exists() and (tmp_path / "bench" / "bench.md").exists()
