"""Every corpus program larger than a few KB gets a parallel, vectorised
kernel at its default schedule (issue criterion: at least 95% of the corpus
a vectorised, parallel kernel; the naive kernel never the answer).

`axon lower P --pipeline stages` prints each stage's tile program at this
host's default schedule; every stage of every program outside SMALL must
hold a parallel loop and vector work: a vectorized loop, a matmul tile or a
copy in register blocks. SMALL programs (inputs of a few KB, where one
thread is the right answer) are checked to be small.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import AXON_BIN, SOURCE_DIR, require_axon  # noqa: E402

CORPUS = SOURCE_DIR / "bench" / "corpus"
SMALL = {"rmsnorm_tiny", "tiny_elementwise"}
SIZES = {"f32": 4, "f64": 8, "f16": 2, "bf16": 2, "i32": 4, "i64": 8, "bool": 1}


def input_bytes(source):
    total = 0
    for dtype, dims in re.findall(r'"(\w+)\[([0-9, ]*)\]"', source):
        n = 1
        for d in dims.split(","):
            if d.strip():
                n *= int(d)
        total += n * SIZES[dtype]
    return total


def stages(text):
    """The (header, body) of each stage in `axon lower --pipeline stages`."""
    parts = re.split(r"^(# stage \d+ \(\w+\)|# the whole graph \(\w+\))$", text, flags=re.M)
    return list(zip(parts[1::2], parts[2::2]))


def test_the_corpus_is_large():
    assert len(list(CORPUS.glob("*.py"))) >= 40


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="default schedules are parallel on hosts of 2 cores or more")
@pytest.mark.parametrize("program", sorted(p.stem for p in CORPUS.glob("*.py")))
def test_default_kernel_is_parallel_and_vectorised(program):
    require_axon()
    spec = CORPUS / f"{program}.py"
    if program in SMALL:
        assert input_bytes(spec.read_text()) < 64 * 1024, f"{program} is not small"
        return
    r = subprocess.run([str(AXON_BIN), "lower", str(spec), "--pipeline", "stages"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    found = stages(r.stdout)
    assert found, r.stdout
    for header, body in found:
        assert "parallel(" in body, f"{program} {header}: no parallel loop\n{body}"
        vector = "vectorized" in body or re.search(r"^\s*matmul ", body, re.M) or re.search(r"^\s*copy .*\[\d+, \d+\]$", body, re.M)
        assert vector, f"{program} {header}: no vector work\n{body}"
