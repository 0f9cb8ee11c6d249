// The file protocol between axon and the driver it compiles around a
// candidate kernel (docs/gate.md, "protocol"). axon writes two files:
//
//   plan.txt    text, one record a line:
//                 axon-gate-plan 1
//                 buffers <inputs> <outputs>
//                 size <buffer> <bytes>            (inputs first, then outputs)
//                 block <b> <offset> <bytes>       (a slice of blocks.bin)
//                 set <s> <block of input 0> ...   (one block per input)
//                 call <c> <set> <layout> <fresh>  (layout: after|before|heap)
//                 time <set> <warmup> <min_reps> <min_ms> <max_ms>
//                 end
//   blocks.bin  the input buffers' bytes, in the kernel ABI's representation.
//
// and the driver appends to two files:
//
//   events.log  text, one event a line (key=value fields):
//                 ready threads=<n>
//                 begin call=<c>
//                 end call=<c> threads=<n> running=<n> changed_after_return=<0|1>
//                     input_changed=<buffer or -1>
//                 fault signal=<n> code=<n> addr=0x<hex> region=<input|output|none>
//                     side=<inside|before|after> buffer=<b> offset=<bytes> call=<c>
//                 oom call=<c>
//                 progress reps=<n>
//                 time median_ms=<x> min_ms=<x> max_ms=<x> reps=<n>
//                 error <text>
//                 done
//   outputs.bin the output buffers of every call that ended, in call order,
//               as they were the moment the call returned.
//
// Layouts: "after" maps each buffer so that its last byte touches a
// PROT_NONE page (an overrun faults at once), "before" so that its first
// byte follows one (an underrun faults), "heap" uses malloc (for the
// sanitized build, whose redzones do that job). Input pages are read-only
// outside "heap"; outputs are filled with 0xFF bytes (NaN in every float
// format) before each call. A fresh call gets newly mapped buffers, mapped
// while the previous ones still exist, so its addresses differ from the
// previous call's; a call that is not fresh reuses the previous call's
// buffers with the new set's data written into them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace axon::gate {

enum class Layout { GuardAfter, GuardBefore, Heap };
const char* layout_name(Layout l);  // "after", "before", "heap"

struct PlannedCall {
  int set = 0;
  Layout layout = Layout::GuardAfter;
  bool fresh = true;
};

struct DriverPlan {
  std::vector<int64_t> input_bytes, output_bytes;
  std::vector<std::vector<uint8_t>> blocks;
  std::vector<std::vector<int>> sets;  // per set: the block of each input
  std::vector<PlannedCall> calls;
  int time_set = -1;                   // -1: no timing
  int warmup = 1, min_reps = 5;
  double min_ms = 200, max_ms = 3000;
};

/// Writes plan.txt and blocks.bin. Throws InternalError when it cannot.
void write_plan(const DriverPlan& plan, const std::string& plan_path, const std::string& blocks_path);

struct CallRecord {
  int call = -1;
  int threads = 0, running = 0;
  bool changed_after_return = false;
  int input_changed = -1;
  std::vector<std::vector<uint8_t>> outputs;  // as returned
};

struct Fault {
  int signal = 0, code = 0;
  uint64_t addr = 0;
  std::string region = "none", side = "inside";
  int buffer = -1;
  int64_t offset = 0;
  int call = -1;
};

struct DriverLog {
  bool ready = false, done = false;
  int baseline_threads = 0;
  int last_begun = -1;
  std::vector<CallRecord> calls;  // the calls that ended, in order
  std::optional<Fault> fault;
  std::optional<int> oom_call;
  bool timed = false;
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int reps = 0;
  std::string error;
};

/// Parses what the driver left; missing or truncated files give a log with
/// whatever was complete (a killed driver leaves a partial one).
DriverLog read_driver_log(const DriverPlan& plan, const std::string& events_path, const std::string& outputs_path);

}  // namespace axon::gate
