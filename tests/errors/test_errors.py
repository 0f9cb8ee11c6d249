"""Bad specs: `axon check` must fail with exit code 1 and an LLVM-style
diagnostic at the right place.

Each tests/errors/*.py file states what it expects in its first lines:
  # ERROR: LINE:COL: SUBSTRING   -> stderr starts with FILE:LINE:COL: error:,
                                    the message contains SUBSTRING, and the
                                    source line and a caret at COL follow
  # ERROR: FILE: SUBSTRING       -> a diagnostic about the file as a whole
                                    (FILE: error: ...), no caret
  # ERROR: -D: SUBSTRING         -> a diagnostic about the -D option
  # ARGS: ...                    -> extra command-line arguments (optional)
"""

import ast
import re
import shlex
from pathlib import Path

import pytest

import conftest

HERE = Path(__file__).resolve().parent
SPECS = sorted(p for p in HERE.glob("*.py") if not p.name.startswith("test_"))

HEADER_RE = re.compile(r"^# ERROR: (?P<where>\d+:\d+|FILE|-D): (?P<message>.+)$")
ARGS_RE = re.compile(r"^# ARGS: (?P<args>.*)$")


def read_expectation(path):
    lines = path.read_text().splitlines()
    m = HEADER_RE.match(lines[0])
    assert m, f"{path.name}: first line must be '# ERROR: LINE:COL: message'"
    args = []
    if len(lines) > 1 and ARGS_RE.match(lines[1]):
        args = shlex.split(ARGS_RE.match(lines[1]).group("args"))
    return m.group("where"), m.group("message"), args


def test_enough_error_specs():
    assert len(SPECS) >= 35


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_headers_are_well_formed(path):
    where, _, _ = read_expectation(path)
    text = path.read_text()
    if where[0].isdigit():
        line, col = map(int, where.split(":"))
        source_lines = text.splitlines()
        assert 1 <= line <= len(source_lines), f"{path.name}: line {line} is past the end"
        assert 1 <= col <= len(source_lines[line - 1]) + 1, f"{path.name}: column {col} is past the end of line {line}"
    # Only the syntax_* specs are meant to be invalid Python; for the others
    # a syntax complaint would be axon misreading valid Python.
    if path.stem.startswith("syntax_"):
        with pytest.raises(SyntaxError):
            ast.parse(text)
    else:
        ast.parse(text)


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_error(path):
    where, message, args = read_expectation(path)
    proc = conftest.run_axon(["check", path, *args], timeout=60)
    assert proc.returncode == conftest.EXIT_USER_ERROR, (
        f"expected exit 1 (a user error), got {proc.returncode}\n{conftest.describe(proc)}")
    assert proc.stdout == "", f"a failed check must print no IR\n{conftest.describe(proc)}"
    lines = proc.stderr.splitlines()
    assert lines, "no diagnostic on stderr"
    head = lines[0]
    if where == "-D":
        prefix = "-D: error: "
    elif where == "FILE":
        prefix = f"{path}: error: "
    else:
        prefix = f"{path}:{where}: error: "
    assert head.startswith(prefix), f"expected a diagnostic starting with {prefix!r}\n{conftest.describe(proc)}"
    assert message in head[len(prefix):], f"expected {message!r} in the message\n{conftest.describe(proc)}"
    if where[0].isdigit():
        line, col = map(int, where.split(":"))
        assert len(lines) >= 3, f"expected the source line and a caret line\n{conftest.describe(proc)}"
        assert lines[1] == path.read_text().splitlines()[line - 1], f"second line must be source line {line}"
        assert lines[2].rstrip() == " " * (col - 1) + "^", f"caret must sit under column {col}:\n{lines[2]!r}"
