// The CPUs a child process may run on.
//
// OpenMP binds the thread that starts a parallel region to the first place
// (OMP_PROC_BIND=close, which the Measurer sets so that timings are
// repeatable), and on Linux a thread's CPU mask is inherited by every thread
// and process it creates. Without care, everything axon starts after its
// first timed kernel (the compilers of the next batch, peers.py with torch
// and JAX, the gate's runs) would be confined to one core: `axon bench`
// once timed the peers that way. The mask the process started with is
// remembered before main(), and ScopedStartMask gives it back to the
// calling thread while a child is spawned.
#pragma once

#include <sched.h>

namespace axon::support {

/// The CPU mask of the process when it started (before any OpenMP region).
const cpu_set_t& start_mask();

/// While alive, the calling thread runs on start_mask(); the thread's own
/// mask is restored on destruction. Spawn children inside one.
class ScopedStartMask {
 public:
  ScopedStartMask();
  ~ScopedStartMask();
  ScopedStartMask(const ScopedStartMask&) = delete;
  ScopedStartMask& operator=(const ScopedStartMask&) = delete;

 private:
  cpu_set_t saved_;
  bool restore_ = false;
};

}  // namespace axon::support
