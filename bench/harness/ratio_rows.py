"""Prints one line per contender of a peers.py --out JSON: its status, its
interleaved time and the ratio of a base contender's time to it.

Usage: python3 bench/harness/ratio_rows.py RESULT.json BASE LABEL
(BASE: a --kernel name or a peer's name; LABEL: the first word of each line).
"""

import json
import sys


def main(path, base, label):
    r = json.load(open(path))
    rows = {**r["kernels"], **r["peers"]}
    base_ms = rows[base]["interleaved_ms"]
    for name, row in rows.items():
        ms = row.get("interleaved_ms")
        print(f"{label:10s} {name:18s} {row['status']:4s} " + (f"{ms:8.3f} ms  {base_ms / ms:5.2f}x vs {base}" if ms else ""))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit("usage: ratio_rows.py RESULT.json BASE LABEL")
    main(*sys.argv[1:])
