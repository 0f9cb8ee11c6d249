#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks (idempotent), then builds axon
# into build/. Safe to run again: installed packages are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake ninja-build libgtest-dev nlohmann-json3-dev libcli11-dev libz3-dev libsqlite3-dev libhwloc-dev pkg-config python3)
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

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${AXON_BUILD_TYPE:-Release}" >/dev/null
cmake --build build -j"$(nproc)"
