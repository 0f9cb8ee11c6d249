// The user driver: a second trusted main() linked with the same optimised
// kernel object, which calls the kernel the way an ordinary program would.
// Its buffers come from malloc (inputs copied in, outputs left as malloc
// returns them), nothing is poisoned, guarded, sampled or sanitized, and no
// signal handler is installed. It calls the kernel `calls` times on the
// same buffers (fewer when they take longer than max_ms in all) and keeps
// the outputs of the first and of the last call.
//
//   user_plan.txt   axon-gate-user 1
//                   buffers <inputs> <outputs>
//                   size <buffer> <bytes>
//                   input <i> <offset in blocks.bin>
//                   calls <n> <max_ms>
//                   end
//   events          "ready", "first", "progress calls=<n>", "last calls=<n>", "done"
//   outputs         the outputs after the first call, then after the last
#pragma once

#include <string>

#include "codegen/c_like/kernel_abi.h"
#include "gate/battery.h"
#include "ir/graph.h"

namespace axon::gate {

/// user_driver.cpp, the same for every spec (it calls the kernel through
/// call.cpp's axon_gate_call, driver_source.h); linked with call.o and the
/// kernel, run as `user_driver PLAN BLOCKS EVENTS OUTPUTS`.
const std::string& user_driver_source();

/// Writes user_plan.txt for `plan` on the battery's blocks (as write_plan
/// lays them out in blocks.bin). Throws InternalError when it cannot.
void write_user_plan(const Battery& b, const std::string& path);

/// What the user run left: the outputs after its first and last calls.
struct UserLog {
  bool ready = false, first = false, done = false;
  int64_t calls = 0;
  std::vector<std::vector<uint8_t>> first_outputs, last_outputs;
};
UserLog read_user_log(const DriverPlan& plan, const std::string& events_path, const std::string& outputs_path);

}  // namespace axon::gate
