// Placeholder detection (ISA from the compiler's cpu probe, no caches, no
// peaks); replaced by hwloc detection and the built-in probe.
#include "target/target.h"

#include <thread>

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

std::string Target::fingerprint() const {
  return name + "/" + std::to_string(isa.vector_bits()) + "/" + std::to_string(cores);
}

Target detect_host(bool probe) {
  Target t;
  t.name = "host";
  t.threads = static_cast<int>(std::thread::hardware_concurrency());
  t.cores = t.threads;
  __builtin_cpu_init();
  t.isa.avx2 = __builtin_cpu_supports("avx2");
  t.isa.fma = __builtin_cpu_supports("fma");
  t.isa.avx512f = __builtin_cpu_supports("avx512f");
  t.isa.avx512bw = __builtin_cpu_supports("avx512bw");
  t.isa.avx512vl = __builtin_cpu_supports("avx512vl");
  t.isa.avx512dq = __builtin_cpu_supports("avx512dq");
  t.caches = {{1, 48 << 10, 64, 1}, {2, 2 << 20, 64, 1}, {3, 32 << 20, 64, t.cores}};
  if (probe) measure_peaks(t);
  return t;
}

void measure_peaks(Target&) {}

Target restrict_to_avx2(Target t) {
  t.isa.avx512f = t.isa.avx512bw = t.isa.avx512vl = t.isa.avx512dq = false;
  t.isa.avx512vnni = t.isa.avx512bf16 = false;
  return t;
}

nlohmann::json to_json(const Target& t) { return {{"name", t.name}, {"cores", t.cores}}; }
Target from_json(const nlohmann::json&, Target base) { return base; }

}  // namespace axon::target
