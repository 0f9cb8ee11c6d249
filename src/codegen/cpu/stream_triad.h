// The STREAM triad as a standalone kernel: what `axon bench` times in the
// same bursts as axon's kernel and the peers (bench/harness/peers.py
// --stream), so that a bandwidth fraction compares times taken in the same
// seconds instead of against a probe run minutes earlier or later.
//
/// The kernel is `extern "C" void axon_stream_triad(float* a, const float* b,
/// const float* c, int64_t n)`: a[i] = b[i] + 3 * c[i] for i in [0, n). It
/// repeats target::measure_peaks' triad: the same arithmetic, AVX2 vectors
/// when the description has them (scalar otherwise), plain write-allocating
/// stores, and one contiguous part of [0, n) per core; its threads are
/// OpenMP's, pinned as the kernels' are (OMP_PROC_BIND=close). Its bandwidth
/// counts 12 bytes per element (two reads, one write; the write-allocate
/// read is not counted, as in STREAM and in the probe).
///
/// Requires: a, b, c hold n floats each and do not overlap.
#pragma once

#include "codegen/kernel_source.h"
#include "target/target.h"

namespace axon::codegen {

/// The symbol of the triad kernel.
inline constexpr const char* kStreamTriadEntry = "axon_stream_triad";

/// Bytes the triad is credited with per element (b and c read, a written).
inline constexpr double kStreamTriadBytesPerElement = 12.0;

/// The triad kernel for `t` (its ISA and core count).
KernelSource stream_triad_kernel(const target::Target& t);

}  // namespace axon::codegen
