"""`axon lower --pipeline stages`: what the kernel is printed from, stage by
stage, at this host's default schedule (docs/tile_ir.md)."""
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import EXIT_OK, EXIT_USER_ERROR, SOURCE_DIR, run_axon  # noqa: E402

WORKLOADS = SOURCE_DIR / "bench" / "workloads"


def stages(workload):
    r = run_axon(["lower", WORKLOADS / f"{workload}.py", "--pipeline", "stages", "--json"])
    assert r.returncode == EXIT_OK, r.stderr
    return {s["stage"]: s["program"] for s in json.loads(r.stdout)["stages"]}


def test_a_matmul_is_one_gemm_program_of_register_tiles():
    got = stages("s1_matmul")
    assert list(got) == ["stage 0 (contraction)"]
    program = got["stage 0 (contraction)"]
    assert "matmul C{" in program and "(min(pb, 1) ? += : =)" in program
    assert "parallel" in program and "alloc Bpack" in program


def test_attention_is_one_program_with_an_online_softmax():
    got = stages("m5_attention")
    assert list(got) == ["stage 0 (attention)"]
    program = got["stage 0 (attention)"]
    assert program.count("matmul ") == 2
    assert "max=" in program and "lrow[i] = lrow[i] * alpha[] + sum[]" in program


def test_bias_and_gelu_are_the_gemm_epilogue():
    got = stages("m2_matmul_bias_gelu")
    assert list(got) == ["stage 0 (epilogue)"]
    program = got["stage 0 (epilogue)"]
    # The bias is an input read at the column; the epilogue follows the last
    # K slice's matmul (keep 1), the columns as vector lanes.
    assert "E0: f32[4096]" in program
    # Every K slice but the last in one loop (kc per ISA: 256, 384 under AVX-512 with a 48 KiB L1).
    kc = int(re.search(r"K = 1024; tile \d+x\d+, kc (\d+)", program).group(1))
    assert "tanh(" in program and f"for pb in [0, {-(-1024 // kc) - 1})" in program
    assert re.search(r"for ej in \[0, \d+\) vectorized", program)
    assert re.search(r"E0\[jb \* \d+ \+ jr \* \d+ \+ ej\]", program)  # nc and nr per ISA


def test_copies_loops_and_row_stages():
    assert "copy " in stages("s8_transpose")["stage 0 (copy)"]
    assert "vectorized" in stages("s2_softmax")["the whole graph (loops)"]
    # The knobs of the row kernel emitter axon had before are gone.
    for knob in ("k0.tile", "k0.row_group"):
        r = run_axon(["lower", WORKLOADS / "s2_softmax.py", "--pipeline", "stages", "--json", "--schedule",
                      json.dumps({knob: 0})])
        assert r.returncode == EXIT_USER_ERROR and "not in this graph's space" in r.stderr, (knob, r.stderr)


def test_a_row_stage_is_its_tile_program():
    """--schedule with a row stage's knobs: the stage's loops program, one
    parallel loop over rows dealt in chunks (row_block), the row in scratch,
    vector loops, the exp held in a row-sized scratch and the output
    streamed (nt_store); a staged graph's row stage too."""
    r = run_axon(["lower", WORKLOADS / "s2_softmax.py", "--pipeline", "stages", "--json", "--schedule",
                  json.dumps({"k0.threads": 2, "k0.row_block": 8, "k0.nt_store": 1})])
    assert r.returncode == EXIT_OK, r.stderr
    got = json.loads(r.stdout)
    assert got["schedule"]["k0.row_block"] == 8
    program = got["stages"][0]["program"]
    assert "parallel(2 threads, chunks of 8)" in program and "(streaming)" in program, program
    assert got["stages"][0]["stage"] == "the whole graph (loops)"
    assert "vectorized" in program
    assert ": scratch f32[1024]" in program, program
    assert "mul(t" in program and "div(1, " in program, program  # reciprocal_divisors
    r = run_axon(["lower", WORKLOADS / "m1_rmsnorm_matmul.py", "--pipeline", "stages", "--json", "--schedule",
                  json.dumps({"k0.unroll": 1})])
    assert r.returncode == EXIT_OK, r.stderr
    stages_ = {s["stage"]: s["program"] for s in json.loads(r.stdout)["stages"]}
    assert "vectorized" in stages_["stage 0 (row)"], stages_["stage 0 (row)"]
    r = run_axon(["lower", WORKLOADS / "s2_softmax.py", "--pipeline", "loops", "--schedule", "{}"])
    assert r.returncode == EXIT_USER_ERROR
    assert "--schedule applies to --pipeline stages" in r.stderr


def test_other_flags_are_refused_with_stages():
    r = run_axon(["lower", WORKLOADS / "s1_matmul.py", "--pipeline", "stages", "--cpp"])
    assert r.returncode == EXIT_USER_ERROR
    assert "--cpp applies to --pipeline naive or loops" in r.stderr
