#!/bin/sh
# Band ablation of the layout-copy generator on s8_transpose: one schedule
# (16 x 16 blocks, streaming stores, order 0) emitted with bands of 1, 2, 4
# and 8 at tile 512 and with a band of 4 at tiles 256 and 128, by
# `axon compile --schedule`; each checked against numpy and timed
# interleaved with the others and numpy in one process (peers.py --kernel,
# cold inputs rotated through 192 MiB). Usage (after scripts/setup.sh):
#   bench/copy/bands.sh [rounds=8]
set -e
cd "$(dirname "$0")/../.."
rounds="${1:-8}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
spec=bench/workloads/s8_transpose.py
python3 -c "import numpy as np, sys; np.save(sys.argv[1], np.random.default_rng(7).standard_normal((2048, 2048)))" "$work/x.npy"
kernels=""
for v in "1 512" "2 512" "4 512" "8 512" "4 256" "4 128"; do
  set -- $v
  name="band$1_tile$2"
  build/axon compile "$spec" -o "$work/$name" --json --schedule "{\"k0.copy.band\": $1, \"k0.copy.tile\": $2, \
\"k0.copy.nt_store\": 1, \"k0.copy.order\": 0, \"k0.copy.threads\": 2, \"k0.copy.vector\": 1, \"k0.copy.width\": 16}" \
    >"$work/$name.json"
  # The compiler and flags axon itself builds this kernel with.
  build="$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(j["compiler"], *j["flags"])' "$work/$name.json")"
  $build -I"$work/$name" "$work/$name/kernel.cpp" -o "$work/$name.so"
  kernels="$kernels --kernel $name=$work/$name.so:s8_transpose"
done
python3 bench/harness/peers.py --spec "$spec" --inputs "$work/x.npy" --peers numpy \
  --rotate-bytes 201326592 --interleave-rounds "$rounds" $kernels --out "$work/bands.json" >/dev/null
python3 bench/harness/ratio_rows.py "$work/bands.json" band1_tile512 s8
