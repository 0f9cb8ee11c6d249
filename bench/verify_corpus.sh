#!/usr/bin/env bash
# Every program of bench/corpus through the gate: `axon optimize` (a short
# search, no tuning database) writes its kernel, then `axon verify` judges
# that kernel against the spec. Once for the host's own description and, on
# an AVX-512 host, once more for the host restricted to AVX2 + FMA
# (`axon target --avx2`), so that both ISAs' kernels are judged on one
# machine. One line per program and description, then a summary; exit
# status 1 when any kernel was not written or not accepted.
#
#   bench/verify_corpus.sh OUT [BUDGET_S] [SPEC ...]
#
# OUT/<description>/<program>/ keeps kernel.cpp, report.json, verdict.json
# and the two commands' logs. BUDGET_S (default 3) is each search's budget;
# SPECs default to bench/corpus/*.py. Run it with nothing else on the
# machine: the verdict times each kernel against its roofline floor.
# About 20 s per program and description on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/verify_corpus.sh OUT [BUDGET_S] [SPEC ...]}
budget=${2:-3}
shift $(($# >= 2 ? 2 : 1))
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(bench/corpus/*.py)
axon=${AXON_BIN:-build/axon}
mkdir -p "$out"

descriptions=(host)
if grep -qw avx512f /proc/cpuinfo; then
  "$axon" target --no-probe --json --avx2 > "$out/avx2.json"
  descriptions+=(avx2)
fi

accepted=0 failed=()
for d in "${descriptions[@]}"; do
  target=()
  [ "$d" = avx2 ] && target=(--target "$out/avx2.json")
  for spec in "${specs[@]}"; do
    name=$(basename "$spec" .py)
    dir="$out/$d/$name"
    mkdir -p "$dir"
    if ! "$axon" optimize "$spec" -o "$dir" --budget "$budget" --no-db --seed 1 "${target[@]}" > "$dir/optimize.log" 2>&1; then
      echo "$d $name: optimize failed (see $dir/optimize.log)"
      failed+=("$d/$name")
      continue
    fi
    "$axon" verify "$spec" "$dir/kernel.cpp" --seed 1 --json > "$dir/verdict.json" 2> "$dir/verify.log" || true
    verdict=$(python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("no verdict (%s)" % e)
    sys.exit()
worst = max(d.get("max_error_over_budget", {}).values(), default=float("nan"))
reasons = "; ".join(str(r) for r in d.get("reasons", []))
print(d["verdict"] + (" (" + reasons + ")" if reasons else ""), "- worst error %.3g of the budget" % worst)
' "$dir/verdict.json")
    echo "$d $name: $verdict"
    if [[ $verdict == accept* ]]; then accepted=$((accepted + 1)); else failed+=("$d/$name"); fi
  done
done
echo "verify_corpus: $accepted accepted, ${#failed[@]} not: ${failed[*]:-none}"
[ ${#failed[@]} -eq 0 ]
