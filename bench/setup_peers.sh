#!/usr/bin/env bash
# Installs the peers `axon bench` compares against, from PyPI with pip:
# numpy, PyTorch (eager and torch.compile), JAX on CPU, and matplotlib for
# bench.png. Idempotent: a package that already imports is left alone.
#
# PyTorch's CPU-only wheels are published outside PyPI; from PyPI alone the
# Linux wheel brings its CUDA libraries too (several GB of nvidia-* wheels),
# which are unused here but harmless. Set AXON_PEERS_SKIP="torch jax" to
# leave some out; the bench then reports them as "not installed".
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

status=0
need numpy numpy || status=1
need matplotlib matplotlib || status=1
need torch torch || status=1
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
