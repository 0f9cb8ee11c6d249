// What a Target is, independently of where it came from: the vector width
// its ISA allows, its fingerprint (the tuning database's key), the AVX2-only
// restriction, and the human-readable description `axon target` prints.
// Detection lives in detect.cpp, the peak measurement in probe.cpp, the JSON
// form in target_json.cpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <unistd.h>

#include "target/target.h"

namespace axon::target {

int Isa::vector_bits() const {
  if (avx512f && avx512bw && avx512vl && avx512dq) return 512;
  if (avx2 && fma) return 256;
  return 0;
}

const Cache* Target::cache(int level) const {
  for (const Cache& c : caches)
    if (c.level == level) return &c;
  return nullptr;
}

std::string isa_flags(const Isa& isa) {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ' ';
    s += name;
  };
  add(isa.avx2, "avx2");
  add(isa.fma, "fma");
  add(isa.avx512f, "avx512f");
  add(isa.avx512bw, "avx512bw");
  add(isa.avx512vl, "avx512vl");
  add(isa.avx512dq, "avx512dq");
  add(isa.avx512vnni, "avx512vnni");
  add(isa.avx512bf16, "avx512bf16");
  return s;
}

// Peaks are left out on purpose: they are measured, so they wobble from run
// to run, and a database keyed on them would never hit. Everything here is
// what a schedule's legality or tile sizes depend on.
std::string Target::fingerprint() const {
  std::ostringstream os;
  os << name << ";isa=" << isa_flags(isa) << ";cores=" << cores << ";threads=" << threads;
  for (const Cache& c : caches)
    os << ";L" << c.level << "=" << c.bytes << "/" << c.line_bytes << "/" << c.shared_by_cores;
  return os.str();
}

Target restrict_to_avx2(Target t) {
  t.isa.avx512f = t.isa.avx512bw = t.isa.avx512vl = t.isa.avx512dq = false;
  t.isa.avx512vnni = t.isa.avx512bf16 = false;
  return t;
}

Target resolve_target(const std::string& override_file, bool avx2_only, bool probe) {
  Target t = detect_host(/*probe=*/false);
  if (!override_file.empty()) t = load_target_file(override_file, t);
  if (avx2_only) t = restrict_to_avx2(t);
  const Peaks& p = t.peaks;
  bool from_file = p.fma_gflops_1t > 0 || p.fma_gflops_all > 0 || p.stream_gbs_1t > 0 || p.stream_gbs_all > 0;
  if (probe && !from_file) measure_peaks(t);
  return t;
}

namespace {
std::string bytes_str(int64_t b) {
  char buf[32];
  if (b >= (1 << 20) && b % (1 << 20) == 0) std::snprintf(buf, sizeof buf, "%lld MiB", static_cast<long long>(b >> 20));
  else if (b >= 1024 && b % 1024 == 0) std::snprintf(buf, sizeof buf, "%lld KiB", static_cast<long long>(b >> 10));
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}
}  // namespace

std::string describe(const Target& t) {
  std::ostringstream os;
  char buf[256];
  os << "target       " << t.name << "\n";
  os << "cores        " << t.cores << " physical, " << t.threads << " hardware threads\n";
  os << "isa          " << (isa_flags(t.isa).empty() ? "(none)" : isa_flags(t.isa)) << "\n";
  os << "vector width " << t.isa.vector_bits() << " bits\n";
  for (const Cache& c : t.caches) {
    std::snprintf(buf, sizeof buf, "L%d cache     %s, %d-byte lines, shared by %d core%s\n", c.level,
                  bytes_str(c.bytes).c_str(), c.line_bytes, c.shared_by_cores, c.shared_by_cores == 1 ? "" : "s");
    os << buf;
  }
  const Peaks& p = t.peaks;
  if (p.fma_gflops_1t > 0 || p.fma_gflops_all > 0) {
    std::snprintf(buf, sizeof buf, "fp32 FMA     %.1f GFLOP/s on 1 thread, %.1f GFLOP/s on all cores\n", p.fma_gflops_1t,
                  p.fma_gflops_all);
    os << buf;
  }
  if (p.stream_gbs_1t > 0 || p.stream_gbs_all > 0) {
    std::snprintf(buf, sizeof buf, "stream       %.1f GB/s on 1 thread, %.1f GB/s on all cores\n", p.stream_gbs_1t,
                  p.stream_gbs_all);
    os << buf;
  }
  if (p.read_gbs_all > 0 || p.nt_copy_gbs_all > 0 || p.nt_triad_gbs_all > 0) {
    std::snprintf(buf, sizeof buf,
                  "memory       ceiling %.1f GB/s on all cores, real traffic: read-only %.1f, streaming copy %.1f, "
                  "streaming triad %.1f, triad %.1f\n",
                  bandwidth_ceiling_gbs(p), p.read_gbs_all, p.nt_copy_gbs_all, p.nt_triad_gbs_all,
                  p.stream_gbs_all * 16.0 / 12.0);
    os << buf;
  }
  if (p.fma_gflops_1t <= 0 && p.fma_gflops_all <= 0 && p.stream_gbs_1t <= 0 && p.stream_gbs_all <= 0)
    os << "peaks        not measured\n";
  os << "fingerprint  " << t.fingerprint() << "\n";
  return os.str();
}

double last_level_cache_bytes(const Target& t) {
  const Cache* llc = nullptr;
  for (const Cache& c : t.caches)
    if (!llc || c.level > llc->level) llc = &c;
  if (!llc || llc->bytes <= 0) return 32.0 * 1024 * 1024;  // a generous guess when hwloc says nothing
  int share = std::max(1, llc->shared_by_cores);
  int instances = std::max(1, (t.cores + share - 1) / share);
  return static_cast<double>(llc->bytes) * instances;
}

double physical_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

double cold_rotation_bytes(const Target& t) {
  const double llc2 = 2.0 * last_level_cache_bytes(t);
  const double wanted = 3.0 * std::max(64.0 * 1024 * 1024, llc2);
  const double memory = physical_memory_bytes();
  if (memory <= 0) return wanted;
  return std::min(wanted, std::max(llc2, memory / 16.0));
}

namespace {

// The probe's four loops, each with the traffic it really causes (the plain
// triad's stores also read each line: 16 bytes per element, 4 of them
// written) and the share of it that is written.
std::array<MixCeiling, 4> probe_loops(const Peaks& p) {
  return {{{p.read_gbs_all, "read-only sum", 0.0},
           {p.stream_gbs_all * 16.0 / 12.0, "triad", 0.25},
           {p.nt_triad_gbs_all, "streaming triad", 1.0 / 3.0},
           {p.nt_copy_gbs_all, "streaming copy", 0.5}}};
}

}  // namespace

double bandwidth_ceiling_gbs(const Peaks& p) {
  double best = 0;
  for (const MixCeiling& l : probe_loops(p)) best = std::max(best, l.gbs);
  return best;
}

MixCeiling bandwidth_ceiling_of_mix(const Peaks& p, double write_share) {
  MixCeiling best;
  double best_distance = 0;
  for (const MixCeiling& l : probe_loops(p)) {
    if (l.gbs <= 0) continue;
    double d = std::abs(l.loop_write_share - write_share);
    if (best.gbs <= 0 || d < best_distance - 1e-9 || (d <= best_distance + 1e-9 && l.gbs > best.gbs)) {
      best = l;
      best_distance = d;
    }
  }
  return best;
}

int64_t stream_triad_elements(const Target& t) {
  return static_cast<int64_t>(cold_rotation_bytes(t) / 3.0) / static_cast<int64_t>(sizeof(float));
}

}  // namespace axon::target
