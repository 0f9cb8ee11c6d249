#!/usr/bin/env python3
"""Times kernels compiled by `axon compile` side by side, in turns.

    bench/ab/time_kernels.py [--cpu-time] [--cold] ROUNDS DIR_A DIR_B [DIR ...]
    bench/ab/time_kernels.py --processes ROUNDS DIR_A DIR_B [DIR ...]

Each DIR holds a kernel.cpp and kernel.h of the same spec (for example the
same workload compiled by two builds of axon at one schedule). Every kernel
is built as axon builds it for this host (-O3 -fopenmp -ffp-contract=off and
the host's AVX-512 or AVX2 flags), its buffers are read from the shape table
of kernel.h, filled with uniform [-1, 1) floats (bools: alternate; integers:
small) and 64-byte aligned; then, ROUNDS times, each kernel is called 3 times
to warm up and 11 times timed, kernels in turn. Prints one line per kernel:
the median over rounds of each round's median, in ms, and its ratio to the
first. Float32, bool and int inputs only. With --cpu-time the calling
thread's CPU time is measured instead of the wall clock: for kernels on one
thread (`*.threads` 1) on a loaded host, whose wall times count the slices
other processes took. With --cold each kernel cycles through copies of
its buffers that reach 192 MiB (at least 2), a call on the next copy each
time, as `axon bench` rotates cold inputs (docs/bench.md): a kernel whose
input fits the L3 is then timed reading it from memory, not from the cache. With --processes each round's timing of each kernel
runs in a fresh process (the library built once): on a loaded 2-core host,
OpenMP kernels timed in turns in one process sometimes waited 8 to 48 ms
per call (a var_axis0 kernel of 0.16 ms alone gave round medians of 0.15
and 36 ms), while one kernel per process gave steady times.
"""
import ctypes
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "bool": np.bool_}


def host_flags():
    flags = open("/proc/cpuinfo").read()
    if all(f in flags for f in ("avx512f", "avx512bw", "avx512vl", "avx512dq")):
        return ["-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx2", "-mfma"]
    if "avx2" in flags and "fma" in flags:
        return ["-mavx2", "-mfma"]
    return []


COLD_BYTES = 192 << 20  # the bench's cold rotation on a 32 MiB L3 (docs/bench.md, "Cold inputs")


def load(directory, out, cold=False):
    """The kernel's call on its buffers, and the buffers. With `cold`, as many
    sets of buffers as reach COLD_BYTES (at least 2), each call on the next."""
    if not cold:
        return load_set(directory, out, 0)
    call, buffers = load_set(directory, out, 0)
    per_set = sum(a.nbytes for _, a in buffers)
    sets = [(call, buffers)] + [load_set(directory, out, i) for i in range(1, max(2, -(-COLD_BYTES // per_set)))]
    turn = [0]

    def next_call():
        sets[turn[0] % len(sets)][0]()
        turn[0] += 1
    return next_call, [b for _, bs in sets for b in bs]


def load_set(directory, out, seed_offset):
    header = open(os.path.join(directory, "kernel.h")).read()
    entry = re.search(r"void (\w+)\(", header).group(1)
    so = os.path.join(out, os.path.basename(os.path.abspath(directory)) + f"_{zlib.crc32(directory.encode())}.so")
    if not os.path.exists(so):
        subprocess.run(["g++", "-w", "-O3", "-fopenmp", "-ffp-contract=off", "-fPIC", "-shared", *host_flags(), "-I",
                        directory, os.path.join(directory, "kernel.cpp"), "-o", so], check=True)
    buffers = []
    rng = np.random.default_rng(5 + seed_offset)
    for name, dtype, dims in re.findall(r"^//\s+(\w+)\s+(\w+)\[([0-9, ]*)\]\s+(?:input|output)", header, re.M):
        shape = [int(d) for d in dims.split(",") if d.strip()]
        n = int(np.prod(shape)) if shape else 1
        raw = np.empty(n * 8 + 64, dtype=np.uint8)
        off = (-raw.ctypes.data) % 64
        a = raw[off:off + n * np.dtype(DTYPES[dtype]).itemsize].view(DTYPES[dtype])
        if dtype == "bool":
            a[:] = np.arange(n) % 2 == 0
        elif dtype.startswith("i"):
            a[:] = rng.integers(0, 4, n)
        else:
            a[:] = rng.uniform(-1, 1, n)
        buffers.append((raw, a))
    fn = getattr(ctypes.CDLL(so), entry)
    args = [ctypes.c_void_p(a.ctypes.data) for _, a in buffers]
    return lambda: fn(*args), buffers


def time_calls(call, clock=time.perf_counter):
    """The seconds of 11 calls after 3 warm-up calls."""
    for _ in range(3):
        call()
    times = []
    for _ in range(11):
        t0 = clock()
        call()
        times.append(clock() - t0)
    return times


def time_one(call, clock=time.perf_counter):
    """The median ms of 11 calls after 3 warm-up calls."""
    return statistics.median(time_calls(call, clock)) * 1e3


def report(dirs, medians):
    first = statistics.median(medians[0])
    for d, m in zip(dirs, medians):
        ms = statistics.median(m)
        print(f"{d}\t{ms:.4g} ms\t{ms / first:.3f}\t(rounds: {' '.join(f'{x:.4g}' for x in m)})")


def main():
    args = sys.argv[1:]
    if args and args[0] == "--one":  # a child of --processes: DIR OUT
        call, _ = load(args[1], args[2])
        print(time_one(call))
        return
    clock = time.perf_counter
    if args and args[0] == "--cpu-time":
        clock, args = time.thread_time, args[1:]
    cold = bool(args) and args[0] == "--cold"
    if cold:
        args = args[1:]
    if args and args[0] == "--processes":
        rounds, dirs = int(args[1]), args[2:]
        with tempfile.TemporaryDirectory() as out:
            outs = []
            for i, d in enumerate(dirs):
                outs.append(os.path.join(out, str(i)))
                os.mkdir(outs[-1])
            medians = [[] for _ in dirs]
            for _ in range(rounds):
                for i, d in enumerate(dirs):
                    r = subprocess.run([sys.executable, __file__, "--one", d, outs[i]], check=True, capture_output=True,
                                       text=True)
                    medians[i].append(float(r.stdout))
        report(dirs, medians)
        return
    rounds, dirs = int(args[0]), args[1:]
    with tempfile.TemporaryDirectory() as out:
        kernels = [load(d, out, cold) for d in dirs]
        medians = [[] for _ in dirs]
        for _ in range(rounds):
            for i, (call, _) in enumerate(kernels):
                medians[i].append(time_one(call, clock))
    report(dirs, medians)


if __name__ == "__main__":
    main()
