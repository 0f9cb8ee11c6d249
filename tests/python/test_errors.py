"""The package's exceptions carry the CLI's messages: SpecError with
file:line:col and the caret under the offending expression of the real
file, VerificationError when no kernel passes its check, ShapeError for
arguments that do not fit the annotations."""

import inspect
from pathlib import Path

import numpy as np
import pytest

from pysupport import FAST, SOURCE_DIR, axon

import specs_as_functions as S

HERE = Path(__file__).resolve()


def _line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return start + k, line.rstrip("\n")
    raise AssertionError(text)


def test_spec_error_points_into_the_functions_file():
    f = axon.jit(S.mismatched, **FAST)
    with pytest.raises(axon.SpecError) as e:
        f(np.ones((4, 64), np.float32), np.ones(32, np.float32))
    msg = str(e.value)
    line, text = _line_of(S.mismatched, "x * w")
    col = text.index("x * w") + 1
    path = inspect.getsourcefile(S.mismatched)
    first, source_line, caret = msg.splitlines()[:3]
    assert first.startswith(f"{path}:{line}:"), msg
    assert "error:" in first and "broadcast" in first, msg
    assert source_line == text
    assert caret.index("^") + 1 >= col and caret.strip() == "^"
    assert f.stats["optimized"] == 0


def test_spec_error_of_a_nested_function_keeps_its_column():
    def nested(x: "f32[N]"):
        return np.frobnicate(x)

    f = axon.jit(nested, **FAST)
    with pytest.raises(axon.SpecError) as e:
        f(np.ones(4, np.float32))
    msg = str(e.value)
    line, text = _line_of(nested, "np.frobnicate")
    first, source_line, caret = msg.splitlines()[:3]
    assert first.startswith(f"{HERE}:{line}:"), msg
    assert source_line == text
    assert text[caret.index("^"):].startswith("np.frobnicate") or text[caret.index("^"):].startswith("frobnicate"), msg


def test_spec_error_of_a_spec_file(tmp_path):
    spec = tmp_path / "bad.py"
    spec.write_text('import numpy as np\n\ndef f(x: "f32[4]"):\n    return x @ x @ x\n')
    with pytest.raises(axon.SpecError) as e:
        axon.optimize(spec, {}, **FAST)
    assert str(e.value).startswith(f"{spec}:4:"), str(e.value)
    assert "^" in str(e.value)


def test_verification_error_when_no_kernel_passes(monkeypatch):
    # The test seam of docs/optimize.md: a naive kernel that returns twice the
    # loss, and no schedule space, so nothing can pass.
    opt = SOURCE_DIR / "tests" / "optimize"
    monkeypatch.setenv("AXON_TEST_NAIVE_ONLY", "1")
    monkeypatch.setenv("AXON_TEST_NAIVE_KERNEL", str(opt / "kernels" / "huber_doubled.cpp"))
    with pytest.raises(axon.VerificationError) as e:
        axon.optimize(opt / "specs" / "small_huber.py", {}, budget=3, trials=3, db=False)
    assert "no kernel passed its error-budget check" in str(e.value)
    assert "budget" in str(e.value) and "output 0" in str(e.value)


def test_shape_error_names_the_parameter_and_its_annotation():
    f = axon.jit(S.scale_rows, **FAST)
    with pytest.raises(axon.ShapeError) as e:
        f(np.ones((4, 65), np.float32), np.ones(64, np.float32))
    assert "argument 'x'" in str(e.value) and "f32[N, 64]" in str(e.value)
    assert f.stats["optimized"] == 0


def test_the_exception_kinds():
    assert issubclass(axon.SpecError, ValueError)
    assert issubclass(axon.ShapeError, ValueError) and issubclass(axon.ShapeError, TypeError)
    assert issubclass(axon.VerificationError, RuntimeError)
