#!/usr/bin/env bash
# axon's own kernels (naive and optimised) through the gate, for all 20 workloads (about 25
# minutes on 2 cores; the test suite checks a cheap subset).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
AXON_GATE_ALL_WORKLOADS=1 python3 -m pytest -q -p no:cacheprovider tests/gate/test_own_kernels.py "$@"
