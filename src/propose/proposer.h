// Pluggable proposers for `axon optimize --proposer CMD` (docs/proposers.md):
// a program outside axon (a script, a language model behind a script)
// proposes kernels; axon judges every one with the gate and keeps the
// fastest verified kernel.
//
// The protocol, one JSON document per line, UTF-8, over the proposer's
// stdin (axon -> proposer) and stdout (proposer -> axon); its stderr is
// axon's stderr. axon starts `/bin/sh -c CMD` once and sends, each round:
//
//   {"type": "request", "protocol": 1, "round": N, "rounds": R,
//    "spec": SPEC_TEXT, "entry": NAME, "ir": PRINTED_IR,
//    "target": TARGET_JSON, "abi": KERNEL_H_TEXT,
//    "best": {"id": ID, "source": KERNEL_CPP, "schedule": {KNOB: INT} | null,
//             "time_ms": MS, "timed_by": "search" | "gate", "report": {...}},
//    "space": [{"name": KNOB, "values": [INT...], "doc": TEXT}...],
//    "max_proposals": K,
//    "history": [{"id": ID, "round": N, "kind": "source" | "schedule",
//                 "verdict": "accepted" | "rejected",
//                 "reasons": [{"code": CODE, "message": TEXT}...],
//                 "time_ms": MS | null, "winner": BOOL}...]}
//
// and reads one line back within the round's timeout:
//
//   {"type": "proposals", "proposals": [{"id": ID, "source": KERNEL_CPP}
//                                       | {"id": ID, "schedule": {KNOB: INT}}...]}
//   {"type": "done"}
//
// End of input means goodbye: the proposer should exit; axon kills its
// process group shortly after closing the channel.
//
// A schedule proposal is a point of "space" (knobs it leaves out take the
// best's value, or the knob's default when the best has no schedule); it
// is checked with schedule::why_illegal (illegal: rejected, never
// compiled), then emitted with the backend's emit. Every proposal, source or
// schedule, is judged by gate::verify_kernel with a fresh seed; only an
// accepted one is compared, by the gate's time_ms, with the best timed
// through the same gate path (once, when the first proposal is accepted).
// A proposal wins only when it is faster than the best.
//
// The proposer never sees the seeds of the search or of the gate, the
// reference values, the error budgets, the replay commands or the input
// hashes: they are stripped from every report and message it receives
// (redact_report, redact_message), so that it cannot aim at the battery.
//
// A proposer that cannot be started, crashes, hangs past the round's
// timeout, prints something that is not a JSON message or answers a
// malformed message ends the loop with `error` set; whatever was verified
// before stays, and the best otherwise stays the search's. run_proposer
// never throws because of the proposer.
#pragma once

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_source.h"
#include "gate/gate.h"
#include "ir/graph.h"
#include "optimize/optimize.h"
#include "schedule/schedule.h"
#include "target/target.h"

namespace axon::propose {

/// Reasons of the loop itself (besides gate::reason::k*), for proposals the
/// gate never saw.
namespace reason {
inline constexpr const char* kMalformedProposal = "malformed_proposal";
inline constexpr const char* kIllegalSchedule = "illegal_schedule";
inline constexpr const char* kEmitFailed = "emit_failed";
inline constexpr const char* kGateError = "gate_error";
}  // namespace reason

struct ProposerOptions {
  std::string command;               // run as /bin/sh -c command
  int rounds = 3;                    // most requests sent
  int max_proposals = 8;             // judged per round; the rest are ignored (and said so)
  double round_timeout_s = 300;      // for the proposer to take a request and answer it
  size_t max_message_bytes = 64 << 20;
  /// A proposal wins when its gate time is below (1 - min_gain) times the
  /// best's, so that timing noise alone does not swap equal kernels.
  double min_gain = 0.02;
  /// Options of every gate run; `seed` is ignored (always fresh) and timing
  /// is always on, since the comparison is by the gate's time.
  gate::GateOptions gate;
  std::function<void(const std::string&)> on_message;  // one line per event, for stderr
  const std::atomic<bool>* interrupt = nullptr;       // set: stop after the current proposal
};

struct ProposalRecord {
  std::string id;
  int round = 0;
  std::string kind;      // "source", "schedule", "" when malformed beyond telling
  std::string verdict;   // "accepted" or "rejected"
  std::vector<gate::Reason> reasons;
  std::optional<double> time_ms;  // the gate's median (accepted ones)
  std::optional<schedule::Schedule> schedule;
  std::string kernel_sha;
  bool winner = false;   // became the best (the last one so marked is the final winner)
};

struct ProposerResult {
  bool improved = false;          // a proposal beat the best
  codegen::KernelSource kernel;   // the best at the end (the search's when !improved)
  std::optional<schedule::Schedule> schedule;  // of the best, when it is a schedule of the spec's graph
  std::string winner;             // the winning proposal's id; empty when the search's best stayed
  std::optional<double> baseline_gate_ms;  // the search's best through the gate (when it was needed)
  std::optional<double> best_gate_ms;      // the final best through the gate
  /// The naive kernel through the gate (timed when a proposal won, so that
  /// the report's speedup compares two times of the same path).
  std::optional<double> naive_gate_ms;
  int rounds_run = 0;
  std::string stop_reason;        // "rounds", "done", "proposer failed", "interrupted"
  std::string error;              // what went wrong with the proposer, one line; empty: nothing
  std::vector<ProposalRecord> proposals;
  std::vector<std::string> notes;
};

ProposerResult run_proposer(const ir::Graph& g, const std::string& spec_text, const optimize::OptimizeResult& current,
                            const target::Target& t, const ProposerOptions& opts);

/// `report` (an optimize or gate report) without what the proposer must not
/// see: every key naming a seed, a reference, a budget, a bound, a replay,
/// the inputs or their hashes, evidence, the database, or the verification
/// section; reason messages go through redact_message.
nlohmann::json redact_report(const nlohmann::json& report);

/// A reason message with the values after "reference", "budget", "bound"
/// and "seed" replaced by "<withheld>".
std::string redact_message(const std::string& message);

/// The report.json "proposer" section.
nlohmann::json proposer_json(const ProposerOptions& opts, const ProposerResult& r);

/// Updates an optimize report for `r`: the "proposer" section, and when it
/// improved, time_ms.axon (the gate's time of the winner), time_ms.naive
/// (the gate's time of the naive kernel; time_ms.search and
/// time_ms.search_naive keep the search's), speedup_vs_naive,
/// roofline.fraction, variant and schedule.
void apply_to_report(nlohmann::json& report, const ProposerOptions& opts, const ProposerResult& r);

/// report.md's proposer section (empty when the report has none).
std::string proposer_markdown(const nlohmann::json& report);

}  // namespace axon::propose
