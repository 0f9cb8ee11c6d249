#!/usr/bin/env bash
# Runs the whole test suite: builds (via setup.sh), installs the Python test
# tools (numpy, pytest) if missing, then runs every suite through CTest.
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

cd build
ctest --output-on-failure -j"$(nproc)" "$@"
