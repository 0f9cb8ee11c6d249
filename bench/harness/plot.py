#!/usr/bin/env python3
"""Draws bench.png from `axon bench`'s bench.json: per workload, each
contender's fraction of the roofline floor (floor / time; 1 is the machine's
limit as probed in the same run), on a log scale so that the naive kernel
and the fastest peers fit in one picture.

    plot.py bench.json bench.png

Exit status 3 when matplotlib is not installed (axon bench says so in
bench.md), 0 when the picture was written.
"""
import json
import sys


def main():
    if len(sys.argv) != 3:
        raise SystemExit(f"usage: {sys.argv[0]} bench.json bench.png")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot.py: matplotlib is not installed", file=sys.stderr)
        sys.exit(3)
    with open(sys.argv[1]) as f:
        bench = json.load(f)
    rows = [w for w in bench.get("workloads", []) if "error" not in w and w.get("floor_ms", 0) > 0]
    contenders = ["axon", "naive"] + list(bench.get("peers", []))

    def fraction(w, who):
        row = w.get(who) if who in ("axon", "naive") else w.get("peers", {}).get(who, {})
        ms = row.get("ms", row.get("median_ms", 0)) if row and row.get("status") == "ok" else 0
        return w["floor_ms"] / ms if ms else None

    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(rows) + 2), 4.5))
    width = 0.8 / max(1, len(contenders))
    for k, who in enumerate(contenders):
        xs, ys = [], []
        for i, w in enumerate(rows):
            v = fraction(w, who)
            if v:
                xs.append(i + (k - (len(contenders) - 1) / 2) * width)
                ys.append(v)
        if ys:  # a peer never timed (not installed, failed) has no bars and no legend entry
            ax.bar(xs, ys, width, label=who)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.axhline(0.8, color="grey", linewidth=0.6, linestyle=":")
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([w["name"] for w in rows], rotation=30, ha="right")
    ax.set_ylabel("fraction of the roofline floor (higher is better)")
    probe = bench.get("probe", {})
    ax.set_title(f"axon bench, cold inputs ({probe.get('stream_gbs_all', 0):.1f} GB/s stream, "
                 f"{probe.get('fma_gflops_all', 0):.0f} GFLOP/s FMA probed)", fontsize=10)
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=120)


if __name__ == "__main__":
    main()
