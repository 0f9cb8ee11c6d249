// The hardware description: what the code generators and the search may
// assume about the machine a kernel will run on (docs/target.md).
//
/// A Target is detected on the host (cores and caches from hwloc, the vector
/// ISA from cpuid) and completed by a short built-in probe that measures the
/// peaks the roofline needs (FMA throughput and streaming bandwidth, for one
/// thread and for all cores). A JSON file can override any field, which is
/// also how a narrower machine is described (an AVX2-only Target must still
/// get correct kernels).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace axon::target {

struct Cache {
  int level = 0;            // 1, 2, 3
  int64_t bytes = 0;        // capacity of one instance
  int line_bytes = 64;
  int shared_by_cores = 1;  // how many cores share one instance
};

struct Isa {
  bool avx2 = false, fma = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512vnni = false, avx512bf16 = false;
  /// 512 when the code generators may use AVX-512 (f, bw, vl, dq), 256 for
  /// AVX2 + FMA, 0 for scalar code only.
  int vector_bits() const;
};

/// Measured peaks; 0 means "not measured" (the probe was skipped).
///
/// stream_gbs_* is the STREAM triad as STREAM counts it (12 bytes per
/// element; its plain stores also read each line they write, 16 bytes in
/// all), the rate the cost models are calibrated on. The other three rates
/// are on all cores and count the traffic each loop really causes: a
/// read-only sum (4 bytes per element), a copy with streaming stores (8) and
/// a triad with streaming stores (12). bandwidth_ceiling_gbs() is the most
/// any of the four reached: what a kernel that moves each byte once can get.
struct Peaks {
  double fma_gflops_1t = 0, fma_gflops_all = 0;    // fp32, FLOP = 2 per FMA lane
  double stream_gbs_1t = 0, stream_gbs_all = 0;    // read + write bytes per second / 1e9
  double read_gbs_all = 0, nt_copy_gbs_all = 0, nt_triad_gbs_all = 0;  // real traffic / 1e9
};

/// Bytes per second / 1e9 that memory gave the best of the probe's loops,
/// each credited with the traffic it really causes (the plain triad 16
/// bytes per element); stream_gbs_all where only the triad was measured
/// (a description file from before the other three), 0 when none was.
double bandwidth_ceiling_gbs(const Peaks& p);

/// The rate of the probe's loop whose traffic is most like a kernel's, by
/// the share of its bytes that are written: the read-only sum (0), the plain
/// triad (1/4 of its 16), the streaming triad (1/3), the streaming copy
/// (1/2); of two as near, the faster. What a kernel of that mix can reach:
/// a kernel that only reads (a decode step) cannot reach the copy's rate
/// where a core's reads are limited by how many lines it can have in
/// flight (the AVX-512 Xeon host: read-only 24.7 GB/s, copy 39.3).
struct MixCeiling {
  double gbs = 0;     // 0: none of the loops was measured
  const char* loop = "";
  double loop_write_share = 0;
};
MixCeiling bandwidth_ceiling_of_mix(const Peaks& p, double write_share);

struct Target {
  std::string name;       // CPU model string, or the override's name
  int cores = 1;          // physical cores axon may use
  int threads = 1;        // hardware threads (>= cores)
  std::vector<Cache> caches;  // ordered by level
  Isa isa;
  Peaks peaks;

  /// The cache of `level`, or nullptr.
  const Cache* cache(int level) const;
  /// A stable string over everything that changes which kernel is fastest
  /// (model, ISA, cores, cache sizes); keys the tuning database.
  std::string fingerprint() const;
};

/// Detects the host. `probe`: also measure the peaks (about a second).
Target detect_host(bool probe);

/// Measures `t.peaks` on the host in place.
void measure_peaks(Target& t);

/// The same machine restricted to AVX2 + FMA (no AVX-512).
Target restrict_to_avx2(Target t);

nlohmann::json to_json(const Target& t);
/// Fields present in `j` replace those of `base`; throws axon::Diagnostic on
/// a malformed file (naming the field and the value).
Target from_json(const nlohmann::json& j, Target base);

/// Reads a JSON override file (the format of to_json, any subset of its
/// fields) and applies it to `base`; errors name the file, the field and
/// the value.
Target load_target_file(const std::string& path, Target base);

/// The description a command works with: the host as detected, then the
/// override file when `override_file` is not empty, then the AVX2-only
/// restriction when `avx2_only`, then, when `probe` and no peak came from
/// the file, the measured peaks (measured with the ISA that is left).
Target resolve_target(const std::string& override_file, bool avx2_only, bool probe);

/// The human-readable description `axon target` prints.
std::string describe(const Target& t);

/// Total bytes of the last-level cache (the highest level times its
/// instances); 32 MiB when the description has no caches.
double last_level_cache_bytes(const Target& t);

/// Bytes of buffer copies a timing loop cycles through so that no call finds
/// its data in any cache: the stream probe's working set, three buffers of
/// max(64 MiB, twice the last-level cache). Twice the reported last-level
/// cache is not enough on every machine: on a 2-core cloud VM that reports
/// 32 MiB of L3, a 32 MiB row sum rotating through 2 copies ran 0.70 ms, and
/// through 7 copies 1.35 ms (the host's cache is larger than the VM's share).
/// It is capped at a sixteenth of this machine's memory, but never below
/// twice the last-level cache: `axon bench` keeps one rotation per contender
/// alive for its interleaved rounds, and on a 24 GiB VM that reports a 480
/// MiB L3, six rotations of 2880 MiB had the peers' process killed for
/// memory.
double cold_rotation_bytes(const Target& t);

/// This machine's physical memory in bytes (0 when unknown).
double physical_memory_bytes();

/// Elements of each of the stream probe's three triad buffers: a third of
/// cold_rotation_bytes, so the probe and the timed kernels see the same
/// memory. `axon bench` gives its interleaved triad the same length.
int64_t stream_triad_elements(const Target& t);

/// The ISA flags that are set, space-separated ("avx2 fma avx512f ...").
std::string isa_flags(const Isa& isa);

}  // namespace axon::target
