#!/usr/bin/env python3
"""Checks that every include in src/ follows the layer table src/layers.txt.

Usage: check_layers.py [ROOT]          check; exit 1 listing every violation
       check_layers.py [ROOT] --table  print the table as Markdown

Each line of src/layers.txt names a folder of src/ and the folders its files
may include. The check fails when
  - a file includes a header of a folder its folder's line does not name,
  - an include climbs out of its folder with "..",
  - the table names a folder twice, names a folder that does not exist,
    leaves out a folder of src/, or has a cycle,
  - the layer table of docs/architecture.md says otherwise than src/layers.txt.
CMake builds one library per line of the same table, so what passes here
also links.
"""

import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".def", ".inc"}


def read_table(path):
    """The table as {folder: [allowed folders]} in file order, and its problems."""
    table, problems = {}, []
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([a-z_][a-z0-9_]*)\s*:\s*(.*)", line)
        if not m:
            problems.append(f"{path}:{n}: expected 'folder: deps...', got '{raw}'")
            continue
        folder, deps = m.group(1), m.group(2).split()
        if folder in table:
            problems.append(f"{path}:{n}: {folder} is listed twice")
        if folder in deps:
            problems.append(f"{path}:{n}: {folder} lists itself")
        table[folder] = deps
    return table, problems


def find_cycle(table):
    """One cycle of the table as a list of folders, or None."""
    state = {}  # folder -> 1 while on the stack, 2 when done

    def visit(f, stack):
        state[f] = 1
        stack.append(f)
        for d in table.get(f, []):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                c = visit(d, stack)
                if c:
                    return c
        stack.pop()
        state[f] = 2
        return None

    for f in table:
        if f not in state:
            c = visit(f, [])
            if c:
                return c
    return None


def check(root):
    src = root / "src"
    table_path = src / "layers.txt"
    table, problems = read_table(table_path)
    folders = sorted(p.name for p in src.iterdir() if p.is_dir())

    for f in folders:
        if f not in table:
            problems.append(f"src/layers.txt: folder src/{f}/ has no line")
    for f, deps in table.items():
        for d in [f] + deps:
            if d not in folders:
                problems.append(f"src/layers.txt: {f}: no folder src/{d}/")
    cycle = find_cycle(table)
    if cycle:
        problems.append(f"src/layers.txt: the layers form a cycle: {' -> '.join(cycle)}")

    problems += check_docs(root, table)

    files = includes = 0
    for f in folders:
        allowed = set(table.get(f, [])) | {f}
        for path in sorted((src / f).rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
                continue
            files += 1
            rel = path.relative_to(root)
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                parts = target.split("/")
                if ".." in parts:
                    problems.append(f"{rel}:{n}: {f}/ includes \"{target}\": name headers from src/, without '..'")
                    continue
                if len(parts) < 2 or parts[0] not in folders:
                    continue  # a system or third-party header, or one next to the file
                includes += 1
                if parts[0] not in allowed:
                    may = " ".join(sorted(table.get(f, []))) or "(nothing)"
                    problems.append(f"{rel}:{n}: {f}/ includes {target}, but {f}/ may include only: {may}")
    return table, problems, files, includes


def check_docs(root, table):
    """Problems where docs/architecture.md's table disagrees with src/layers.txt."""
    doc = root / "docs" / "architecture.md"
    if not doc.exists():
        return []
    row = re.compile(r"^\|\s*`([a-z_][a-z0-9_]*)/`\s*\|.*\|\s*([^|]*?)\s*\|\s*$")
    documented = {}
    for line in doc.read_text().splitlines():
        m = row.match(line)
        if m:
            deps = m.group(2)
            documented[m.group(1)] = [] if deps == "(nothing)" else [d.strip() for d in deps.split(",")]
    problems = []
    for f, deps in table.items():
        if f not in documented:
            problems.append(f"docs/architecture.md: the layer table has no row for {f}/")
        elif sorted(documented[f]) != sorted(deps):
            problems.append(f"docs/architecture.md: {f}/ may include {', '.join(documented[f]) or '(nothing)'} "
                            f"there, {', '.join(deps) or '(nothing)'} in src/layers.txt")
    for f in documented:
        if f not in table:
            problems.append(f"docs/architecture.md: the layer table has a row for {f}/, src/layers.txt does not")
    return problems


def print_table(table):
    print("| folder | may include |")
    print("|---|---|")
    for f, deps in table.items():
        print(f"| `{f}/` | {', '.join(deps) if deps else '(nothing)'} |")


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    root = Path(args[0]).resolve() if args else Path(__file__).resolve().parent.parent
    table, problems, files, includes = check(root)
    if "--table" in argv:
        print_table(table)
        return 1 if problems else 0
    if problems:
        print(f"layers: {len(problems)} problem(s) against src/layers.txt:", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    print(f"layers: {includes} includes across {len(table)} folders ({files} files) follow src/layers.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
