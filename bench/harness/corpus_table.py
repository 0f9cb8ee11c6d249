#!/usr/bin/env python3
"""The corpus table: one row per program of an `axon bench` run, and the summary.

    bench/harness/corpus_table.py BENCH.json > bench/results/corpus.md

Per program: axon's cold-input time, the naive kernel's, the best peer's
and axon's ratio to it (> 1: axon faster), the interleaved ratio, the
fraction of the roofline, and the kernel's form from optimize's schedule:
"naive" (the naive kernel is the answer), "parallel" when every stage's
threads knob is above 1, "vector" when no loops stage has vectorize 0.
The summary: counts, and the geometric mean of the ratios.
"""
import json
import math
import sys


def form(o):
    if o.get("variant") == "naive":
        return "naive"
    s = o.get("schedule", {})
    threads = [v for k, v in s.items() if k.endswith("threads")]
    vector = all(v != 0 for k, v in s.items() if k.endswith("loops.vectorize"))
    parts = (["parallel"] if threads and min(threads) > 1 else ["1 thread"]) + (["vector"] if vector else ["scalar"])
    return " ".join(parts)


def main():
    b = json.load(open(sys.argv[1]))
    rows, ratios, inter = [], [], []
    counts = {}
    for w in b["workloads"]:
        o = w.get("optimize", {})
        f = form(o)
        counts[f] = counts.get(f, 0) + 1
        a, n = w.get("axon", {}), w.get("naive", {})
        peer = w.get("best_peer", "")
        pm = w.get("peers", {}).get(peer, {}).get("median_ms")
        r = w.get("speedup_vs_best_peer")
        ir = w.get("interleaved", {}).get("speedup_vs_best_peer")
        if r:
            ratios.append(r)
        if ir:
            inter.append(ir)
        roof = a.get("fraction", {}).get("roofline")
        fmt = lambda x, p=4: f"{x:.{p}g}" if isinstance(x, (int, float)) else "-"  # noqa: E731
        rows.append(f"| {w['name']} | {f} | {fmt(a.get('ms'))} | {fmt(n.get('ms'))} | {peer} {fmt(pm)} | "
                    f"{fmt(r, 3)}x | {fmt(ir, 3)}x | {fmt(roof, 2)} |")
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")  # noqa: E731
    print(f"# The corpus: {len(rows)} programs\n")
    print(f"- command: `{b.get('command', '')}`")
    print(f"- date: {b.get('date', '')}; finished: {b.get('finished', '')}")
    print(f"- kernel forms: " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    print(f"- geometric mean of axon vs the best peer, cold inputs: {geo(ratios):.3f}x over {len(ratios)} programs; "
          f"interleaved: {geo(inter):.3f}x over {len(inter)}")
    print(f"- programs where axon is slower than the best peer (cold): {sum(r < 1 for r in ratios)}\n")
    print("| program | kernel | axon ms | naive ms | best peer ms | vs best peer | interleaved | roofline |")
    print("|---|---|---:|---:|---|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
