#!/usr/bin/env bash
# Rewrites ablation: `axon optimize` with and without the proved rewrites,
# same budget, same seed, fresh temporary tuning databases and compile
# caches for every run (so neither mode profits from the other's compiles).
#
#   bench/rewrites/ablation.sh [--budget S] [--seed N] [--axon PATH] [WORKLOAD.py ...]
#
# Default workloads: all of bench/workloads/*.py. Prints a Markdown table:
# workload, ms with rewrites, ms without, ratio (without / with: above 1
# means the rewrites helped), rewrites applied in the winner, variants
# searched. Raw reports are kept under $ABLATION_OUT (default: a temp dir).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
budget=20
seed=1
axon="${AXON_BIN:-$root/build/axon}"
specs=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --budget) budget="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --axon) axon="$2"; shift 2 ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) specs+=("$1"); shift ;;
  esac
done
if [[ ${#specs[@]} -eq 0 ]]; then specs=("$root"/bench/workloads/*.py); fi
[[ -x "$axon" ]] || { echo "ablation.sh: no axon binary at $axon (build it, or pass --axon)" >&2; exit 1; }

out="${ABLATION_OUT:-$(mktemp -d -t axon-rw-ablation.XXXXXX)}"
mkdir -p "$out"
echo "ablation: budget ${budget}s, seed $seed, axon $axon, reports in $out" >&2

for spec in "${specs[@]}"; do
  w="$(basename "$spec" .py)"
  for mode in with without; do
    flag=()
    [[ $mode == without ]] && flag=(--no-rewrites)
    dir="$out/$w.$mode"
    mkdir -p "$dir"
    start=$(date +%s.%N)
    if ! AXON_CACHE_DIR="$dir/cache" "$axon" optimize "$spec" -o "$dir/out" --db "$dir/tuning.sqlite" \
        --budget "$budget" --seed "$seed" "${flag[@]}" >"$dir/stdout" 2>"$dir/stderr"; then
      echo "ablation: $w ($mode) failed; see $dir/stderr" >&2
    fi
    end=$(date +%s.%N)
    echo "$end - $start" | bc > "$dir/wall_s"
    rm -rf "$dir/cache"
    echo "ablation: $w $mode done in $(cat "$dir/wall_s") s" >&2
  done
done

python3 - "$out" "${specs[@]}" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
print("| workload | ms with rewrites | ms without | ratio (without/with) | rewrites applied | variants searched | wall s (with / without) |")
print("|---|---:|---:|---:|---|---:|---|")
for spec in sys.argv[2:]:
    w = Path(spec).stem
    def load(mode):
        p = out / f"{w}.{mode}" / "out" / "report.json"
        try:
            return json.loads(p.read_text())
        except Exception:
            return None
    a, b = load("with"), load("without")
    wall = lambda m: (out / f"{w}.{m}" / "wall_s").read_text().strip()
    if not a or not b or "time_ms" not in a or "time_ms" not in b:
        print(f"| {w} | failed | | | | | |")
        continue
    ta, tb = a["time_ms"]["axon"], b["time_ms"]["axon"]
    rw = a.get("rewrites", {})
    applied = " + ".join(x["rule"] for x in rw.get("applied", [])) or "none"
    searched = len(rw.get("searched", []))
    print(f"| {w} | {ta:.4g} | {tb:.4g} | {tb / ta:.2f} | {applied} | {searched} | {float(wall('with')):.0f} / {float(wall('without')):.0f} |")
PY
