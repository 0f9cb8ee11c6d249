// Turning what a driver run left behind (its events, its outputs, how the
// process ended, its stderr) into reasons. The rules, per reason code, are
// in docs/gate.md; the comments in judge.cpp say why each is sound for a
// correct kernel.
#pragma once

#include <set>
#include <string>

#include "gate/battery.h"
#include "gate/comparisons.h"
#include "gate/gate.h"
#include "gate/protocol.h"
#include "gate/sandbox.h"
#include "gate/symbols.h"
#include "gate/user_driver_source.h"

namespace axon::gate {

/// Collects reasons, keeping the first of each (code, key).
class Verdict {
 public:
  explicit Verdict(GateReport& report) : report_(report) {}
  /// False when a reason with the same code and key was already added.
  bool add(const std::string& code, const std::string& key, std::string message, nlohmann::json evidence);
  bool has(const std::string& code) const { return report_.has_reason(code); }
  GateReport& report() { return report_; }

 private:
  GateReport& report_;
  std::set<std::string> keys_;
};

struct RunOutcome {
  const DriverPlan* plan = nullptr;
  DriverLog log;
  SandboxResult process;
  std::string child_output;  // the child's stdout and stderr
  bool sanitized = false;
  double idle_timeout_s = 0;               // the watchdog's limit per call
  std::vector<std::string> buffer_names;   // ABI order: parameters, then out0, ...
  std::vector<int64_t> buffer_bytes;
};

/// The kernel's run in a plain process (user_driver_source.h).
struct UserOutcome {
  int set = 0;
  int planned_calls = 0;
  double idle_timeout_s = 0;
  UserLog log;
  SandboxResult process;
  std::string child_output;
};

/// How the process ended: crash, timeout, memory_limit, out_of_bounds,
/// wrote_input (from a fault), sanitizer (from the sanitizers' report).
/// Throws InternalError when the driver itself broke down before the kernel ran.
void judge_process(const RunOutcome& run, Verdict& v);

/// What the calls returned: unwritten_output, wrong_result, nondeterministic,
/// stale_state, ignores_input, wrote_input, work_after_return. Fills
/// report.max_error_over_budget and report.calls for the optimised build.
void judge_calls(const ir::Graph& g, const Battery& b, Comparisons& cmp, const RunOutcome& run, Verdict& v);

/// The plain process: crash or timeout there; environment_dependent when
/// its first or last call is wrong on a set the optimised run got right
/// and that run found no other reason for it.
void judge_user_run(const ir::Graph& g, const Battery& b, Comparisons& cmp, const UserOutcome& user,
                    const RunOutcome& optimised, Verdict& v);

/// The ThreadSanitizer build's concurrent rounds, run when the kernel keeps
/// static memory (`statics`): not_reentrant when two callers race on
/// memory. Returns false, with `why` set, when the run says nothing (it did
/// not finish, or ended for another reason that the other runs judge).
bool judge_race_run(const RunOutcome& run, const std::vector<StaticData>& statics, Verdict& v, std::string* why);

/// "[3, 17]" for flat index 3 * extent + 17 of `shape`.
std::string multi_index(const ir::Shape& shape, int64_t flat);

}  // namespace axon::gate
