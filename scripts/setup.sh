#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks (idempotent), then builds axon
# into build/ and installs its Python package (`pip install .`, reusing that
# build). Safe to run again: installed packages are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake ninja-build libgtest-dev nlohmann-json3-dev libcli11-dev libz3-dev libsqlite3-dev libhwloc-dev pkg-config python3 python3-dev python3-pip)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# pip, falling back to --break-system-packages where the system Python is
# externally managed (Debian 12).
pip_install() {
  python3 -m pip install -q "$@" 2>/dev/null || python3 -m pip install -q --break-system-packages "$@"
}

# The Python package's build tools (PyPI); without them the CLI still builds.
if ! python3 -c "import nanobind, scikit_build_core" 2>/dev/null; then
  echo "setup: installing nanobind and scikit-build-core"
  pip_install nanobind scikit-build-core ||
    echo "setup: warning: could not install nanobind and scikit-build-core; the Python package is not built" >&2
fi

python=$(python3 -c 'import sys; print(sys.executable)')
build_type="${AXON_BUILD_TYPE:-Release}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type" -DPython_EXECUTABLE="$python" \
  -DPython3_EXECUTABLE="$python" >/dev/null
cmake --build build -j"$(nproc)"

# The Python package, built by scikit-build-core in the same build folder
# (pyproject.toml), so nothing of the library is compiled twice.
if python3 -c "import nanobind, scikit_build_core" 2>/dev/null; then
  pip_install --no-build-isolation --config-settings=cmake.build-type="$build_type" . ||
    echo "setup: warning: pip install . failed; the tests use the package staged in build/python" >&2
fi
