#!/usr/bin/env bash
# Installs the peers `axon bench` compares against, from PyPI with pip:
# numpy, PyTorch (eager and torch.compile), JAX on CPU, and matplotlib for
# bench.png. Idempotent: a package that already imports is left alone.
#
# PyTorch's CPU-only wheels are published outside PyPI, at
# download.pytorch.org/whl/cpu: when that index answers within 5 s torch
# comes from there, otherwise from PyPI, whose Linux wheel brings its CUDA
# libraries too (several GB of nvidia-* wheels, unused here but harmless).
# Set AXON_PEERS_SKIP="torch jax" to leave some out; the bench then reports
# them as "not installed". pip falls back to --break-system-packages on an
# externally managed Python.
#
#   bench/setup_peers.sh            # install what is missing
#   PYTHON=python3.11 bench/setup_peers.sh
set -uo pipefail
PY="${PYTHON:-python3}"
SKIP=" ${AXON_PEERS_SKIP:-} "

pip_install() {
  "$PY" -m pip install -q "$@" 2>/dev/null || "$PY" -m pip install -q --break-system-packages "$@"
}

need() {  # need MODULE PIP-SPEC...
  local mod="$1"; shift
  if [[ "$SKIP" == *" $mod "* ]]; then echo "setup_peers: skipping $mod"; return 0; fi
  if "$PY" -c "import $mod" 2>/dev/null; then echo "setup_peers: $mod already installed"; return 0; fi
  echo "setup_peers: installing $*"
  if ! pip_install "$@"; then echo "setup_peers: could not install $* (the bench will say so)" >&2; return 1; fi
}

TORCH_CPU_INDEX="https://download.pytorch.org/whl/cpu"
cpu_index_answers() {
  "$PY" - "$TORCH_CPU_INDEX/torch/" <<'PY' 2>/dev/null
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=5)
PY
}

need_torch() {
  if [[ "$SKIP" == *" torch "* ]]; then echo "setup_peers: skipping torch"; return 0; fi
  if "$PY" -c "import torch" 2>/dev/null; then echo "setup_peers: torch already installed"; return 0; fi
  if cpu_index_answers; then
    echo "setup_peers: installing torch (CPU wheel from $TORCH_CPU_INDEX)"
    pip_install torch --index-url "$TORCH_CPU_INDEX" && return 0
    echo "setup_peers: the CPU index failed; trying PyPI" >&2
  fi
  need torch torch
}

status=0
need numpy numpy || status=1
need matplotlib matplotlib || status=1
need_torch || status=1
need jax "jax[cpu]" || status=1
"$PY" - <<'PY'
import importlib
for m in ("numpy", "torch", "jax", "matplotlib"):
    try:
        print(f"  {m:10s} {importlib.import_module(m).__version__}")
    except Exception as e:  # noqa: BLE001 - report whatever stops the import
        print(f"  {m:10s} not importable: {e}")
PY
exit $status
