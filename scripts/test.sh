#!/usr/bin/env bash
# Runs the whole test suite: builds (via setup.sh), installs the Python test
# tools (numpy, pytest, and torch for the Python package's torch tests) if
# missing, then runs every suite through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

if ! python3 -c "import numpy, pytest" 2>/dev/null; then
  echo "test: installing numpy and pytest"
  python3 -m pip install -q numpy pytest 2>/dev/null ||
    python3 -m pip install -q --break-system-packages numpy pytest 2>/dev/null || {
      SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
      $SUDO apt-get install -y -qq python3-numpy python3-pytest >/dev/null
    }
fi

# torch, for tests/python's torch tests: the CPU build where its index is
# reachable, else PyPI's. Not fatal: without torch those tests are skipped,
# and say so.
if ! python3 -c "import torch" 2>/dev/null; then
  echo "test: installing torch"
  torch_cpu=(torch --index-url https://download.pytorch.org/whl/cpu --retries 1 --timeout 20)
  python3 -m pip install -q "${torch_cpu[@]}" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "${torch_cpu[@]}" 2>/dev/null ||
    python3 -m pip install -q torch 2>/dev/null ||
    python3 -m pip install -q --break-system-packages torch 2>/dev/null ||
    echo "test: torch could not be installed; the torch tests of tests/python are skipped" >&2
fi

cd build
ctest --output-on-failure -j"$(nproc)" "$@"
