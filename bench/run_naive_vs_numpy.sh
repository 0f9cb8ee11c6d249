#!/usr/bin/env bash
# The naive kernels next to numpy on all 20 workloads, measured in one run.
# Without --csv the rows are written to bench/results/naive_vs_numpy.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
python3 -c "import numpy" 2>/dev/null || python3 -m pip install -q numpy
python3 -c "import threadpoolctl" 2>/dev/null && python3 -c "import threadpoolctl, numpy; print(threadpoolctl.threadpool_info())" >&2 || true
csv=(--csv bench/results/naive_vs_numpy.csv)
for a in "$@"; do [[ "$a" == --csv || "$a" == --csv=* ]] && csv=(); done
python3 bench/harness/naive_vs_numpy.py "${csv[@]}" "$@"
