// The file protocol between axon and the driver it compiles around a
// candidate kernel (docs/gate.md, "protocol"). axon writes:
//
//   plan.txt    text, one record a line:
//                 axon-gate-plan 5
//                 buffers <inputs> <outputs>
//                 size <buffer> <bytes>            (inputs first, then outputs)
//                 block <b> <offset> <bytes>       (a slice of blocks.bin)
//                 set <s> <block of input 0> ...   (one block per input)
//                 fillfile <path>                  (the data of the fills, if any)
//                 fill <f> <poison|zeros|untouched|data> [<offset> per output]
//                 call <c> <set> <layout> <fresh> <fill>   (layout: after|before|heap)
//                 slot <k> <set> <fill>            (buffers kept for the phases below)
//                 concurrent <slot a> <slot b> <min rounds> <max rounds> <min ms> <max ms>
//                            <overlaps> <slow overlaps> <overlap ms>
//                 soak <n> <max ms>                (then n lines: s <slot> <fill> <record 0|1>
//                                                   <compare 0|1>; an untouched fill leaves the
//                                                   outputs as the slot's previous call left them)
//                 time                             (the soak's compared calls with a fill that is
//                                                   not untouched are timed)
//                 hold <path>                      (the slots wait until the file exists)
//                 last <slot> <fill>
//                 key <n>                          (64 bits from the seed: the key of the
//                                                   digests that compare slot calls with
//                                                   their baselines)
//                 end
//   blocks.bin  the input buffers' bytes, in the kernel ABI's representation.
//   fills.bin   output-sized blocks the "data" fills copy into outputs.
//
// and the driver appends to two files:
//
//   events.log  text, one event a line (key=value fields):
//                 ready threads=<n>
//                 begin call=<c>
//                 end call=<c> seq=<n> set=<s> layout=<l> fill=<f> slot=<k> phase=<p>
//                     thread=<t> threads=<n> running=<n> changed_after_return=<0|1>
//                     input_changed=<buffer or -1> [same=<earlier record>]
//                 fault signal=<n> code=<n> addr=0x<hex> region=<input|output|none>
//                     side=<inside|before|after> buffer=<b> offset=<bytes> call=<c>
//                 oom call=<c>
//                 progress soak=<n> | progress hold | progress rounds=<n>
//                 held ms=<n>                      (how long the slots waited for the hold file)
//                 soaked calls=<n> planned=<n>
//                 rounds n=<n> burst=<calls per thread and round> overlaps=<n> overlap_ms=<n>
//                 time median_ms=<x> min_ms=<x> max_ms=<x> reps=<n>
//                 error <text>
//                 done
//   outputs.bin the output buffers of every recorded call, in record order,
//               as they were the moment the call returned; a call whose end
//               line has same=R returned record R's outputs bit for bit (a
//               slot's call that matched the slot's baseline) and has none
//               here.
//
// Phases, in order: the battery's calls (each recorded); the hold (when the
// plan names a hold file, the driver waits for it to exist: axon runs
// another process beside the battery and lets the driver go on when it
// has ended); one recorded call per slot (its baseline); the concurrent rounds (two threads, each on its
// own slot, started together; the last round and the first round whose
// output differs from its slot's baseline are recorded, and after the
// rounds one more call per slot, recorded); the soak (its calls in order,
// recorded where the plan says, and each kernel call timed when the plan
// says `time`); the last call (recorded). Every call after the baselines is
// compared bit for bit with its slot's baseline; the first call that
// differs is recorded with two more calls made right after it on the same
// slot, one with the same fill and one with the baseline's fill. A call's
// `seq` is the number of kernel calls the process made before it. Record
// numbers (`call=`) run on from the battery's calls in the order recorded.
//
// Layouts: "after" maps each buffer so that its last byte touches a
// PROT_NONE page (an overrun faults at once), "before" so that its first
// byte follows one (an underrun faults), "heap" uses malloc. Input pages are
// read-only outside "heap". Before each call the outputs get their fill:
// all bytes 0xFF (poison: NaN in every float format), zeros, a data block,
// or nothing (untouched: fresh buffers only, as allocated). A fresh call
// gets newly mapped buffers, mapped while the previous ones still exist, so
// its addresses differ from the previous call's; a call that is not fresh
// reuses the previous call's buffers with the new set's data written into
// them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace axon::gate {

enum class Layout { GuardAfter, GuardBefore, Heap };
const char* layout_name(Layout l);  // "after", "before", "heap"

enum class FillKind { Poison, Zeros, Untouched, Data };

/// What a call's output buffers hold when the kernel gets them.
struct OutputFill {
  std::string name;  // "poison", "nan", "zeros", "random", "outputs of normal#2", "untouched"
  FillKind kind = FillKind::Poison;
  std::vector<std::vector<uint8_t>> data;  // Data: one block per output
};

struct PlannedCall {
  int set = 0;
  Layout layout = Layout::GuardAfter;
  bool fresh = true;
  int fill = 0;
};

struct SoakCall {
  int slot = 0, fill = 0;  // an Untouched fill: the outputs as the slot's previous call left them
  bool record = false;
  bool compare = true;  // compared with the slot's baseline (always when recorded)
};

struct DriverPlan {
  std::vector<int64_t> input_bytes, output_bytes;
  std::vector<std::vector<uint8_t>> blocks;
  std::vector<std::vector<int>> sets;  // per set: the block of each input
  std::vector<OutputFill> fills;       // fill 0 is the poison
  std::vector<PlannedCall> calls;
  std::vector<std::pair<int, int>> slots;  // (set, baseline fill) per slot
  // Concurrent rounds on slots a and b; a < 0: none.
  int concurrent_a = -1, concurrent_b = -1;
  int min_rounds = 8, max_rounds = 4096;
  double rounds_min_ms = 300, rounds_max_ms = 5000;
  // ... and until each thread made min_overlaps calls that overlapped one
  // of the other's, or min_overlaps_slow that add up to min_overlap_ms of
  // its time with both threads inside a call (docs/gate.md, "Verdict time").
  int min_overlaps = 64, min_overlaps_slow = 8;
  double min_overlap_ms = 400;
  std::vector<SoakCall> soak;
  double soak_max_ms = 5000;  // unrecorded soak calls stop after this long (GateOptions::repeat_s)
  bool timed = false;         // the soak's kernel calls are timed
  std::string hold_path;      // the slots wait for this file to exist (empty: no hold)
  int last_slot = -1, last_fill = 0;
  uint64_t key = 0;  // the digests' key (drawn from the seed)

  /// Most records a run of this plan can write (for the file size limit).
  int max_records() const;
};

/// Writes blocks.bin: the plan's blocks back to back.
void write_blocks(const DriverPlan& plan, const std::string& blocks_path);

/// Writes plan.txt and (when a fill has data) fills.bin, named in the plan
/// by its file name alone; blocks.bin (write_blocks) is written once for
/// every run of a verdict, since runs may go on at the same time and map
/// it. Throws InternalError when it cannot.
void write_plan(const DriverPlan& plan, const std::string& plan_path, const std::string& fills_path);

/// The phase a record comes from.
enum class Phase { Battery, Baseline, Concurrent, AfterRounds, Soak, Recheck, Last };
const char* phase_name(Phase p);

/// A recorded call's outputs, one byte vector per output. A record that
/// repeats an earlier one's bytes (`same=R`) shares them instead of holding
/// a copy: on large outputs most records are such repeats, and copying
/// them cost the verdict memory and seconds.
class RecordedOutputs {
 public:
  RecordedOutputs() = default;
  explicit RecordedOutputs(std::vector<std::vector<uint8_t>> bytes)
      : bytes_(std::make_shared<const std::vector<std::vector<uint8_t>>>(std::move(bytes))) {}
  const std::vector<uint8_t>& operator[](size_t o) const { return (*bytes_)[o]; }
  size_t size() const { return bytes_ ? bytes_->size() : 0; }
  bool empty() const { return size() == 0; }
  /// True when both are the same recorded bytes (then equal without a look).
  bool shares(const RecordedOutputs& other) const { return bytes_ && bytes_ == other.bytes_; }
  const std::vector<std::vector<uint8_t>>& all() const {
    static const std::vector<std::vector<uint8_t>> none;
    return bytes_ ? *bytes_ : none;
  }

 private:
  std::shared_ptr<const std::vector<std::vector<uint8_t>>> bytes_;
};

struct CallRecord {
  int call = -1;
  int64_t seq = -1;  // kernel calls the process made before this one
  int set = -1, fill = 0, slot = -1, thread = 0;
  Layout layout = Layout::GuardAfter;
  Phase phase = Phase::Battery;
  int threads = 0, running = 0;
  bool changed_after_return = false;
  int input_changed = -1;
  RecordedOutputs outputs;  // as returned
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
  int64_t soaked = -1, soak_planned = -1;  // soak calls made and planned
  int rounds = -1;                         // concurrent rounds made
  int64_t overlaps = -1;                   // calls that overlapped the other thread's (the fewer of the two)
  double overlap_ms = -1;                  // time in calls with the other thread in one too (the less of the two)
  double held_ms = -1;                     // how long the slots waited for the hold file
  std::string error;

  const CallRecord* record(int call) const;
};

/// Parses what the driver left; missing or truncated files give a log with
/// whatever was complete (a killed driver leaves a partial one).
DriverLog read_driver_log(const DriverPlan& plan, const std::string& events_path, const std::string& outputs_path);

}  // namespace axon::gate
