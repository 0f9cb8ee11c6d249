// See affinity.h.
#include "support/affinity.h"

namespace axon::support {

namespace {

cpu_set_t read_start_mask() {
  cpu_set_t m;
  CPU_ZERO(&m);
  if (sched_getaffinity(0, sizeof m, &m) != 0)
    for (int c = 0; c < CPU_SETSIZE; ++c) CPU_SET(c, &m);  // unknown: allow all, the kernel clips it
  return m;
}

// Read during static initialisation, before main() starts any thread.
const cpu_set_t g_start_mask = read_start_mask();

}  // namespace

const cpu_set_t& start_mask() { return g_start_mask; }

ScopedStartMask::ScopedStartMask() {
  if (sched_getaffinity(0, sizeof saved_, &saved_) != 0) return;
  if (CPU_EQUAL(&saved_, &g_start_mask)) return;
  restore_ = sched_setaffinity(0, sizeof g_start_mask, &g_start_mask) == 0;
}

ScopedStartMask::~ScopedStartMask() {
  if (restore_) sched_setaffinity(0, sizeof saved_, &saved_);
}

}  // namespace axon::support
