// detect_host: the host's description. Cores, hardware threads and the data
// caches come from hwloc (which reads sysfs and cpuid for us and knows
// which cores share which cache); the vector ISA comes from cpuid directly,
// gated on the OS having enabled the register state (xgetbv), since a CPU
// that has AVX-512 under a kernel or hypervisor that does not save zmm
// registers must be treated as AVX2-only. The model string is the cpuid
// brand string. When hwloc fails (no sysfs in a sandbox), the fallback is
// one core per hardware thread and no caches, never a crash.
#include <cpuid.h>
#include <hwloc.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include "target/target.h"

namespace axon::target {

namespace {

struct CpuidRegs {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegs cpuid(unsigned leaf, unsigned sub) {
  CpuidRegs r;
  if (!__get_cpuid_count(leaf, sub, &r.eax, &r.ebx, &r.ecx, &r.edx)) return CpuidRegs{};
  return r;
}

// XCR0, the register state the OS saves across context switches. Inline
// assembly, so this file needs no -mxsave.
uint64_t read_xcr0() {
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

bool bit(unsigned word, int b) { return (word >> b) & 1u; }

Isa detect_isa() {
  Isa isa;
  unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 1) return isa;
  CpuidRegs l1 = cpuid(1, 0);
  bool osxsave = bit(l1.ecx, 27);
  bool avx = bit(l1.ecx, 28);
  uint64_t xcr0 = osxsave ? read_xcr0() : 0;
  bool os_ymm = (xcr0 & 0x6) == 0x6;          // SSE and AVX state
  bool os_zmm = os_ymm && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
  if (!(avx && os_ymm)) return isa;
  isa.fma = bit(l1.ecx, 12);
  if (max_leaf < 7) return isa;
  CpuidRegs l7 = cpuid(7, 0);
  isa.avx2 = bit(l7.ebx, 5);
  if (!os_zmm) return isa;
  isa.avx512f = bit(l7.ebx, 16);
  isa.avx512dq = bit(l7.ebx, 17);
  isa.avx512bw = bit(l7.ebx, 30);
  isa.avx512vl = bit(l7.ebx, 31);
  isa.avx512vnni = bit(l7.ecx, 11);
  if (l7.eax >= 1) isa.avx512bf16 = bit(cpuid(7, 1).eax, 5);
  // Without the foundation none of the extensions may be used.
  if (!isa.avx512f) isa.avx512dq = isa.avx512bw = isa.avx512vl = isa.avx512vnni = isa.avx512bf16 = false;
  return isa;
}

std::string trim(std::string s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::string cpuid_brand() {
  if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000004u) return "";
  char brand[49] = {};
  for (unsigned i = 0; i < 3; ++i) {
    CpuidRegs r = cpuid(0x80000002u + i, 0);
    std::memcpy(brand + 16 * i + 0, &r.eax, 4);
    std::memcpy(brand + 16 * i + 4, &r.ebx, 4);
    std::memcpy(brand + 16 * i + 8, &r.ecx, 4);
    std::memcpy(brand + 16 * i + 12, &r.edx, 4);
  }
  return trim(brand);
}

// Fills cores, threads and caches from hwloc; returns false when the
// topology could not be read.
bool detect_topology(Target& t) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return false;
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return false;
  }
  int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  if (pus <= 0) {
    hwloc_topology_destroy(topo);
    return false;
  }
  t.threads = pus;
  t.cores = cores > 0 ? cores : pus;
  // Data (or unified) caches only: instruction caches do not hold tiles.
  const hwloc_obj_type_t levels[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE};
  t.caches.clear();
  for (int i = 0; i < 4; ++i) {
    hwloc_obj_t c = hwloc_get_obj_by_type(topo, levels[i], 0);
    if (!c || !c->attr || c->attr->cache.size == 0) continue;
    Cache cache;
    cache.level = i + 1;
    cache.bytes = static_cast<int64_t>(c->attr->cache.size);
    cache.line_bytes = c->attr->cache.linesize > 0 ? static_cast<int>(c->attr->cache.linesize) : 64;
    int sharing = hwloc_get_nbobjs_inside_cpuset_by_type(topo, c->cpuset, HWLOC_OBJ_CORE);
    cache.shared_by_cores = std::max(1, sharing);
    t.caches.push_back(cache);
  }
  if (t.name.empty()) {
    for (hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0); o; o = nullptr) {
      const char* model = hwloc_obj_get_info_by_name(o, "CPUModel");
      if (model) t.name = trim(model);
    }
  }
  hwloc_topology_destroy(topo);
  return true;
}

}  // namespace

Target detect_host(bool probe) {
  Target t;
  t.name = cpuid_brand();
  if (!detect_topology(t)) {
    t.threads = std::max(1u, std::thread::hardware_concurrency());
    t.cores = t.threads;
    t.caches.clear();
  }
  if (t.name.empty()) t.name = "unknown x86-64";
  t.isa = detect_isa();
  if (probe) measure_peaks(t);
  return t;
}

}  // namespace axon::target
