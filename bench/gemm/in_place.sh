#!/bin/sh
# Packing ablation of the GEMM generator: for s1_matmul and s9_bmm, one
# schedule emitted four times (A packed or read in place x B packed or read
# in place) with `axon compile --schedule`, each checked against numpy and
# timed interleaved with the others and numpy in one process (peers.py
# --kernel, cold inputs rotated through 192 MiB). Usage (after scripts/setup.sh):
#   bench/gemm/in_place.sh [rounds=9]
set -e
cd "$(dirname "$0")/../.."
rounds="${1:-9}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
run() {  # name spec schedule-without-packing shapes...
  name=$1 spec=$2 sched=$3; shift 3
  python3 - "$work/$name" "$@" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(7)
for i, shape in enumerate(sys.argv[2:]):
    np.save(f"{sys.argv[1]}_in{i}.npy", rng.uniform(-1, 1, [int(d) for d in shape.split("x")]))
PY
  kernels=""
  for pa in 1 0; do for pb in 1 0; do
    v="A$([ $pa = 1 ] && echo packed || echo inplace)_B$([ $pb = 1 ] && echo packed || echo inplace)"
    build/axon compile "$spec" -o "$work/$name-$v" --json \
      --schedule "{$sched, \"k0.gemm.pack_a\": $pa, \"k0.gemm.pack_b\": $pb}" >"$work/$name-$v.json"
    # The compiler and flags axon itself builds this kernel with.
    build="$(python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(j["compiler"], *j["flags"])' "$work/$name-$v.json")"
    $build -I"$work/$name-$v" "$work/$name-$v/kernel.cpp" -o "$work/$name-$v.so"
    kernels="$kernels --kernel $v=$work/$name-$v.so:$name"
  done; done
  python3 bench/harness/peers.py --spec "$spec" --inputs "$work/$name"_in*.npy --peers numpy \
    --rotate-bytes 201326592 --interleave-rounds "$rounds" $kernels --out "$work/$name.json" >/dev/null
  python3 bench/harness/ratio_rows.py "$work/$name.json" Apacked_Bpacked "$name"
}
mm='"k0.gemm.mr": 6, "k0.gemm.nr": 64, "k0.gemm.kc": 256, "k0.gemm.mc": 96, "k0.gemm.nc": 1024, "k0.gemm.threads": 2, "k0.gemm.prefetch": 1'
bmm='"k0.gemm.mr": 6, "k0.gemm.nr": 32, "k0.gemm.kc": 64, "k0.gemm.mc": 192, "k0.gemm.nc": 256, "k0.gemm.threads": 2, "k0.gemm.prefetch": 1'
run s1_matmul bench/workloads/s1_matmul.py "$mm" 1024x1024 1024x1024
run s9_bmm bench/workloads/s9_bmm.py "$bmm" 32x256x64 32x64x256
