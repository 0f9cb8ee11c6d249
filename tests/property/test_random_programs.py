"""Property test: random well-typed numpy programs (progen.py) must run
through `axon run` within budget and with the interpreter equal to numpy.
A failing program is shrunk, keeping the same kind of failure, and the
smallest failing spec is printed."""

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import conftest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import progen  # noqa: E402

SEEDS = range(60)
# Shrinking costs one axon run per candidate; spend it on the first failures.
SHRINK_EVALUATIONS = 80
_shrinks_left = [4]


def failure_of(prog, folder):
    """None if axon handles `prog` correctly, else (kind, message)."""
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "spec.py"
    spec.write_text(prog.source())
    try:
        conftest.differential_check(spec, folder / "dump", timeout=120)
    except conftest.Unsupported as e:
        return "unsupported", str(e)
    except AssertionError as e:
        return _kind(str(e)), str(e)
    return None


def _kind(message):
    """The tag conftest.differential_check puts first: '[exit 2]', '[over budget]', ..."""
    m = re.match(r"\[([^\]]+)\]", message)
    return m.group(1) if m else "other"


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program(seed, tmp_path):
    conftest.require_axon()
    prog = progen.generate(seed)
    failure = failure_of(prog, tmp_path / "original")
    if failure is None:
        return
    kind, message = failure
    report = f"seed {seed}: {kind}\n--- program ---\n{prog.source()}--- failure ---\n{message}\n"
    if _shrinks_left[0] > 0:
        _shrinks_left[0] -= 1
        counter = [0]

        def still_fails(cand):
            counter[0] += 1
            f = failure_of(cand, tmp_path / f"shrink{counter[0]}")
            return f is not None and f[0] == kind

        res = progen.shrink(prog, still_fails, max_evaluations=SHRINK_EVALUATIONS)
        small = res.program
        _, small_message = failure_of(small, tmp_path / "minimal") or (None, "(no longer fails?)")
        report += (f"--- shrunk in {res.steps} steps ({res.evaluations} runs) to ---\n{small.source()}"
                   f"--- its failure ---\n{small_message}\n")
    else:
        report += "(shrink budget spent on earlier failures; this program is not shrunk)\n"
    pytest.fail(report, pytrace=False)


# --------------------------------------------------------------------------
# The generator and the shrinker themselves


def test_generator_is_deterministic():
    assert progen.generate(7).source() == progen.generate(7).source()
    assert len({progen.generate(s).source() for s in SEEDS}) == len(SEEDS)


def test_generated_programs_are_valid_numpy():
    for s in SEEDS:
        prog = progen.generate(s)
        assert progen.is_valid(prog), prog.source()
        outs = progen.run_numpy(prog)
        assert all(np.isfinite(np.asarray(o, dtype=float)).all() for o in outs), prog.source()


def test_generator_covers_the_op_set():
    text = "".join(progen.generate(s).source() for s in SEEDS)
    for marker in ["@", "np.where(", "np.sum(", "np.mean(", "max(", "min(", "keepdims=True", "axis=(",
                   ".T", "np.swapaxes(", "np.transpose(", ".reshape(", "np.expand_dims(", "::-1", "None]",
                   "np.concatenate(", "np.exp(", "np.log(", "np.sqrt(", "np.tanh(", "np.maximum("]:
        assert marker in text, f"no generated program uses {marker!r}"
    assert re.search(r"axis=-\d", text), "no negative axis"


def _seed_with(marker, min_statements=3):
    for s in range(1000):
        p = progen.generate(s)
        if marker in p.source() and len(p.stmts) >= min_statements:
            return p
    raise AssertionError(f"no program with {marker!r}")


def test_shrinker_reaches_the_minimal_form():
    """With a fake failure ("the spec calls np.tanh"), shrinking must end at a
    single np.tanh of one parameter whose dims are all 1."""
    prog = _seed_with("np.tanh(")
    res = progen.shrink(prog, lambda p: "np.tanh(" in p.source(), max_evaluations=2000)
    small = res.program
    assert res.steps > 0
    assert len(small.stmts) == 1, small.source()
    name, e = small.stmts[0]
    assert re.fullmatch(r"np\.tanh\(p\d+\)", e.render(small.dim_sizes())), small.source()
    assert small.outputs == (name,)
    assert len(small.params) == 1
    assert all(s == 1 for s in small.param_shape(small.params[0])), small.source()
    assert small.size() < prog.size()


def test_shrinker_keeps_what_fails():
    """Shrinking never returns a program on which the predicate is false, and
    leaves a program alone when no smaller variant fails."""
    prog = _seed_with("@")
    res = progen.shrink(prog, lambda p: "@" in p.source(), max_evaluations=2000)
    assert "@" in res.program.source()
    assert len(res.program.stmts) == 1, res.program.source()
    untouched = progen.shrink(prog, lambda p: False, max_evaluations=50)
    assert untouched.steps == 0
    assert untouched.program == prog


def test_shrinker_keeps_dead_code_that_matters():
    """axon evaluates every statement, so a failure may sit in dead code:
    the shrinker must not drop it when only it fails."""
    prog = _seed_with("np.mean(", min_statements=4)
    prog = progen.Program(prog.dims, prog.params, prog.stmts, (prog.params[0].name,))
    res = progen.shrink(prog, lambda p: "np.mean(" in p.source(), max_evaluations=2000)
    assert "np.mean(" in res.program.source()
    assert len(res.program.stmts) == 1, res.program.source()


def test_shrinker_with_an_always_failing_predicate_empties_the_program():
    prog = _seed_with("np.sum(")
    small = progen.shrink(prog, lambda p: True, max_evaluations=2000).program
    assert small.stmts == ()
    assert len(small.params) == 1 and small.outputs == (small.params[0].name,)
    assert all(s == 1 for s in small.param_shape(small.params[0]))


def test_shrinker_respects_its_budget():
    prog = _seed_with("np.tanh(")
    calls = [0]

    def pred(p):
        calls[0] += 1
        return True

    res = progen.shrink(prog, pred, max_evaluations=3)
    assert calls[0] == res.evaluations <= 3
