"""Ctrl-C during an @axon.jit search (python/ext/search.h): the first SIGINT
stops the search and the call returns the best kernel found so far, with a
SearchWarning; a SIGINT after the search interrupts Python as usual.

The program runs in a child process that the test interrupts once the
search's progress line shows verified kernels, so the signal always lands
inside the search, whatever the machine's load.
"""

import os
import select
import signal
import subprocess
import sys
import textwrap
import time

from pysupport import SOURCE_DIR

STAGED = os.environ.get("AXON_PYTHONPATH") or str(SOURCE_DIR / "build" / "python")

PROGRAM = textwrap.dedent('''
    import sys, time
    import numpy as np
    import axon

    def shifted_tanh(x: "f32[N, 64]", w: "f32[64]"):
        return np.tanh(x * w) + 1.0

    f = axon.jit(shifted_tanh, budget=300, progress=True, db=sys.argv[1])
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((256, 64)).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    y = f(x, w)
    ref = np.tanh(x.astype(np.float64) * w) + 1.0  # in [0, 2]
    err = float(np.max(np.abs(y - ref)))
    print("returned", err, f.report(x, w)["search"]["stop_reason"], flush=True)
    time.sleep(120)
    print("slept through the second interrupt", flush=True)
''')


def read_until(stream, needle, timeout):
    """Reads `stream` until `needle` appears; returns everything read."""
    seen, end = b"", time.monotonic() + timeout
    while needle not in seen and time.monotonic() < end:
        ready, _, _ = select.select([stream], [], [], 1.0)
        if ready:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                break
            seen += chunk
    return seen


def test_ctrl_c_keeps_the_best_kernel_and_a_second_one_interrupts_python(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    env = dict(os.environ, PYTHONPATH=STAGED + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, str(script), str(tmp_path / "tuning.sqlite")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    try:
        progress = read_until(p.stderr, b"verified 2", 240)
        assert b"verified 2" in progress, progress.decode(errors="replace")[-2000:]
        p.send_signal(signal.SIGINT)
        interrupted_at = time.monotonic()
        out = read_until(p.stdout, b"\n", 120).decode()
        # The 300-s budget was cut short: the call returned soon after.
        assert out.startswith("returned "), out
        assert time.monotonic() - interrupted_at < 60
        _, err, reason = out.split()
        assert reason == "interrupted"
        assert float(err) < 1e-5  # the kernel it kept is a verified one
        p.send_signal(signal.SIGINT)
        rest_out, rest_err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    stderr = progress.decode(errors="replace") + rest_err.decode(errors="replace")
    assert "the search was interrupted" in stderr  # the SearchWarning
    assert "KeyboardInterrupt" in stderr
    assert b"slept through" not in rest_out
    assert p.returncode != 0
