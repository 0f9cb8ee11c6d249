#!/bin/sh
# Builds and runs the GEMM timing driver, then numpy (OpenBLAS) on the same shapes.
set -e
cd "$(dirname "$0")/../.."
c++ -std=c++20 -O2 -Isrc -o /tmp/axon-gemm-bench-driver bench/gemm/gemm_bench.cpp \
  build-gemm/libaxon_lib.a -lhwloc -lz3 -lsqlite3 -ldl -lpthread  # cmake --build build-gemm first
/tmp/axon-gemm-bench-driver "${1:-2}" "${2:-15}"
python3 - "${1:-2}" <<'PY'
import os, sys, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", sys.argv[1])
import numpy as np
for name, (b, m, n, k) in {"1024^3": (1, 1024, 1024, 1024), "8x512^3": (8, 512, 512, 512),
                           "s9 32x256x256x64": (32, 256, 256, 64)}.items():
    A = np.random.rand(b, m, k).astype(np.float32); B = np.random.rand(b, k, n).astype(np.float32)
    A @ B
    ts = []
    for _ in range(15):
        t0 = time.perf_counter(); A @ B; ts.append(time.perf_counter() - t0)
    ts.sort()
    print(f"numpy {name:18s} median {ts[7]*1e3:.3f} ms, {2*b*m*n*k/ts[7]/1e9:.1f} GFLOP/s")
PY
