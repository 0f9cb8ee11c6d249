#!/usr/bin/env bash
# Rewrites ablation: every workload optimized with and without the proved
# rewrites (same budget, same seed), then both winners timed side by side in
# one process with cold inputs, next to the naive kernel; the ratio is from
# one run. A thin wrapper over `axon bench --ablate-rewrites` (docs/bench.md).
#
#   bench/rewrites/ablation.sh [--budget S] [--seed N] [--peers LIST] [--axon PATH] [WORKLOAD.py ...]
#
# Default workloads: the multi-operator ones, bench/workloads/m*.py, plus
# s5_gelu (a rewrite of one elementwise op). Default peers: none. A fresh
# temporary tuning database per run, so no answer comes from an earlier
# search. The table is the "Rewrites ablation" section of
# $ABLATION_OUT/bench.md (default: a temp dir); bench.csv has the columns
# axon_ms, axon_no_rewrites_ms, rewrites_speedup, rewrites_applied.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
budget=20
peers=none
axon="${AXON_BIN:-$root/build/axon}"
specs=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --budget) budget="$2"; shift 2 ;;
    --seed) [[ "$2" == 1 ]] || { echo "ablation.sh: axon bench searches with seed 1" >&2; exit 1; }; shift 2 ;;
    --peers) peers="$2"; shift 2 ;;
    --axon) axon="$2"; shift 2 ;;
    -h|--help) sed -n 2,14p "$0"; exit 0 ;;
    *) specs+=("$1"); shift ;;
  esac
done
if [[ ${#specs[@]} -eq 0 ]]; then specs=("$root"/bench/workloads/m*.py "$root"/bench/workloads/s5_gelu.py); fi
[[ -x "$axon" ]] || { echo "ablation.sh: no axon binary at $axon (build it, or pass --axon)" >&2; exit 1; }

out="${ABLATION_OUT:-$(mktemp -d -t axon-rw-ablation.XXXXXX)}"
mkdir -p "$out"
db="$out/tuning.sqlite"
rm -f "$db"
echo "ablation: budget ${budget}s, axon $axon, results in $out" >&2
"$axon" bench "${specs[@]}" --budget "$budget" --db "$db" --peers "$peers" --ablate-rewrites -o "$out"
sed -n '/^## Rewrites ablation/,$p' "$out/bench.md"
