#!/usr/bin/env python3
"""Rewrites the CHECK lines of tests/golden/*.py from the current output of
their RUN commands, so that a change to the IR printer shows up as a diff to
review, like LLVM's update_test_checks.py.

usage: scripts/update_golden.py [--axon BUILD/axon] [--check] [SPEC.py ...]
  --check   rewrite nothing; exit 1 if any file would change
"""

import argparse
import sys
from pathlib import Path

SOURCE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(SOURCE_DIR / "tests" / "golden"))
import filecheck  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--axon", type=Path, default=filecheck.default_axon_bin(SOURCE_DIR))
    ap.add_argument("--check", action="store_true", help="only report files whose CHECK lines are stale")
    ap.add_argument("specs", nargs="*", type=Path)
    args = ap.parse_args()
    if not args.axon.is_file():
        sys.exit(f"update_golden: no axon binary at {args.axon} (build first or pass --axon)")
    specs = args.specs or filecheck.golden_specs(SOURCE_DIR / "tests" / "golden")
    stale = failed = 0
    for path in specs:
        spec = filecheck.GoldenSpec(path)
        rc, out, err = filecheck.run(spec, args.axon, cwd=SOURCE_DIR)
        if rc != 0:
            print(f"{path}: '{spec.run_line}' exited {rc}; left unchanged\n{err}", file=sys.stderr)
            failed += 1
            continue
        new = filecheck.rewritten(spec, out)
        if new == spec.text:
            continue
        stale += 1
        if args.check:
            print(f"{path}: CHECK lines are stale")
        else:
            path.write_text(new)
            print(f"{path}: updated")
    if failed or (args.check and stale):
        sys.exit(1)


if __name__ == "__main__":
    main()
