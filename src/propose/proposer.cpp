// run_proposer: the request/answer loop with an outside proposer, every
// proposal judged by the gate (the contract and the protocol are in
// proposer.h; the prose in docs/proposers.md).
#include "propose/proposer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <regex>
#include <set>
#include <sstream>

#include "backend/backend.h"
#include "gate/report.h"
#include "ir/printer.h"
#include "propose/child_process.h"
#include "support/diagnostic.h"

namespace axon::propose {

using json = nlohmann::json;

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Keys the proposer must not see, as substrings of the lower-cased key.
bool is_withheld_key(const std::string& key) {
  static const char* const kWithheld[] = {"seed",   "reference", "budget",   "bound",  "replay", "inputs",
                                          "hashes", "evidence",  "database", "work_dir", "verification"};
  std::string k = lower(key);
  for (const char* w : kWithheld)
    if (k.find(w) != std::string::npos) return true;
  return false;
}

json redact_value(const json& j) {
  if (j.is_object()) {
    json o = json::object();
    for (const auto& [k, v] : j.items()) {
      if (is_withheld_key(k)) continue;
      o[k] = k == "message" && v.is_string() ? json(redact_message(v.get<std::string>())) : redact_value(v);
    }
    return o;
  }
  if (j.is_array()) {
    json a = json::array();
    for (const json& v : j) a.push_back(redact_value(v));
    return a;
  }
  return j;
}

std::string first_chars(const std::string& s, size_t n) {
  std::string t = s.substr(0, n);
  for (char& c : t)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s.size() > n ? t + "..." : t;
}

std::string fmt_ms(double ms) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g ms", ms);
  return b;
}

gate::Reason loop_reason(const char* code, std::string message) { return {code, std::move(message), json::object()}; }

json space_json(const schedule::Space& sp) {
  json a = json::array();
  for (const auto& k : sp.knobs) a.push_back({{"name", k.name}, {"values", k.values}, {"doc", k.doc}});
  return a;
}

json reasons_json(const std::vector<gate::Reason>& rs, bool redacted) {
  json a = json::array();
  for (const auto& r : rs) a.push_back({{"code", r.code}, {"message", redacted ? redact_message(r.message) : r.message}});
  return a;
}

// The state the requests describe.
struct Best {
  std::string id = "search";
  codegen::KernelSource kernel;
  std::optional<schedule::Schedule> schedule;  // a point of the spec graph's space
  double time_ms = 0;
  std::string timed_by = "search";
  std::optional<double> gate_ms;  // set once timed by the gate
  bool gate_timed = false;        // tried (it may have failed)
  json report;                    // what the proposer is shown (redacted)
};

class Loop {
 public:
  Loop(const ir::Graph& g, const std::string& spec_text, const optimize::OptimizeResult& cur, const target::Target& t,
       const ProposerOptions& o)
      : g_(g), spec_text_(spec_text), t_(t), o_(o), be_(backend::cpu_backend(t)), space_(be_->space(g)) {
    best_.kernel = cur.kernel;
    best_.time_ms = cur.axon_ms;
    best_.report = redact_report(cur.report);
    // The search's schedule is one of the spec's graph only when its winner
    // is no rewritten variant and no naive kernel; proposals are points of
    // the spec's graph's space.
    bool rewritten = cur.report.contains("rewrites") && cur.report["rewrites"].contains("winner_steps") &&
                     !cur.report["rewrites"]["winner_steps"].empty();
    if (cur.report.value("variant", "") == "schedule" && !rewritten) best_.schedule = cur.schedule;
  }

  ProposerResult run() {
    res_.kernel = best_.kernel;
    res_.schedule = best_.schedule;
    ChildProcess child(o_.command);
    if (!child.started()) return fail(child, "could not start the proposer: " + child.start_error());
    for (int round = 1; round <= o_.rounds; ++round) {
      if (interrupted()) {
        res_.stop_reason = "interrupted";
        break;
      }
      std::string err;
      if (!child.send_line(request(round).dump(), o_.round_timeout_s, &err))
        return fail(child, "the proposer did not take request " + std::to_string(round) + ": " + err + " (" +
                               child.exit_status(0.5) + ")");
      std::string line;
      auto st = child.read_line(&line, o_.round_timeout_s, o_.max_message_bytes);
      if (st == ChildProcess::ReadStatus::Timeout) {
        char b[64];
        std::snprintf(b, sizeof b, "%g", o_.round_timeout_s);
        return fail(child, "the proposer did not answer round " + std::to_string(round) + " within " + b +
                               " s; killed it");
      }
      if (st == ChildProcess::ReadStatus::Eof)
        return fail(child, "the proposer ended (" + child.exit_status(2) + ") before answering round " +
                               std::to_string(round));
      if (st == ChildProcess::ReadStatus::TooLong)
        return fail(child, "the proposer's answer to round " + std::to_string(round) + " is longer than " +
                               std::to_string(o_.max_message_bytes) + " bytes");
      res_.rounds_run = round;
      json msg;
      try {
        msg = json::parse(line);
      } catch (const json::exception&) {
        return fail(child, "the proposer's answer to round " + std::to_string(round) + " is not JSON: '" +
                               first_chars(line, 80) + "'");
      }
      std::string type = msg.is_object() && msg.contains("type") && msg["type"].is_string() ? msg["type"].get<std::string>() : "";
      if (type == "done") {
        say("proposer: round " + std::to_string(round) + ": done");
        res_.stop_reason = "done";
        break;
      }
      if (type != "proposals" || !msg.contains("proposals") || !msg["proposals"].is_array())
        return fail(child, "the proposer's answer to round " + std::to_string(round) +
                               " is not {\"type\": \"proposals\", \"proposals\": [...]} nor {\"type\": \"done\"}: '" +
                               first_chars(line, 80) + "'");
      const json& ps = msg["proposals"];
      size_t n = std::min(ps.size(), static_cast<size_t>(std::max(0, o_.max_proposals)));
      if (ps.size() > n)
        note("round " + std::to_string(round) + ": judged the first " + std::to_string(n) + " of " +
             std::to_string(ps.size()) + " proposals (max_proposals)");
      say("proposer: round " + std::to_string(round) + ": " + std::to_string(ps.size()) + " proposal(s)");
      for (size_t i = 0; i < n && !interrupted(); ++i) judge(round, i, ps[i]);
      if (interrupted()) {
        res_.stop_reason = "interrupted";
        break;
      }
    }
    if (res_.stop_reason.empty()) res_.stop_reason = "rounds";
    child.finish(2);
    return finish_result();
  }

 private:
  bool interrupted() const { return o_.interrupt && o_.interrupt->load(); }
  void say(const std::string& s) const {
    if (o_.on_message) o_.on_message(s);
  }
  void note(const std::string& s) {
    res_.notes.push_back(s);
    say("proposer: " + s);
  }

  ProposerResult fail(ChildProcess& child, const std::string& why) {
    child.finish(0.5);
    res_.error = why;
    res_.stop_reason = "proposer failed";
    say("proposer: error: " + why + "; keeping the best kernel so far");
    return finish_result();
  }

  ProposerResult finish_result() {
    if (res_.improved && !interrupted()) time_naive_by_gate();
    res_.kernel = best_.kernel;
    res_.schedule = best_.schedule;
    res_.best_gate_ms = best_.gate_ms;
    return res_;
  }

  json request(int round) const {
    json history = json::array();
    for (const auto& p : res_.proposals)
      history.push_back({{"id", p.id}, {"round", p.round}, {"kind", p.kind}, {"verdict", p.verdict},
                         {"reasons", reasons_json(p.reasons, true)},
                         {"time_ms", p.time_ms ? json(*p.time_ms) : json(nullptr)}, {"winner", p.winner}});
    json best = {{"id", best_.id},
                 {"source", best_.kernel.source},
                 {"schedule", best_.schedule ? schedule::to_json(*best_.schedule) : json(nullptr)},
                 {"time_ms", best_.time_ms},
                 {"timed_by", best_.timed_by},
                 {"report", best_.report}};
    return {{"type", "request"}, {"protocol", 1},          {"round", round},
            {"rounds", o_.rounds},  {"spec", spec_text_},     {"entry", g_.entry},
            {"ir", ir::print(g_)},  {"target", redact_report(target::to_json(t_))},
            {"abi", best_.kernel.header}, {"best", best},  {"space", space_json(space_)},
            {"max_proposals", o_.max_proposals}, {"history", history}};
  }

  gate::GateReport gate_run(const std::string& source) {
    gate::GateOptions go = o_.gate;
    go.seed.reset();  // fresh every time: the proposer cannot choose or learn it
    go.time_kernel = true;
    go.replay_command.clear();
    go.work_dir.clear();
    go.keep_work_dir = false;
    return gate::verify_kernel(g_, source, go);
  }

  // Times the search's best through the gate, once, so that proposals are
  // compared with it on the same path.
  void time_best_by_gate() {
    if (best_.gate_timed) return;
    best_.gate_timed = true;
    say("proposer: timing the current best through the gate");
    try {
      gate::GateReport r = gate_run(best_.kernel.source);
      if (r.accepted && r.time_ms) {
        best_.gate_ms = *r.time_ms;
        res_.baseline_gate_ms = *r.time_ms;
        best_.time_ms = *r.time_ms;
        best_.timed_by = "gate";
        say("proposer: current best: " + fmt_ms(*r.time_ms) + " through the gate");
      } else {
        std::string why = r.reasons.empty() ? "no time" : r.reasons[0].code + ": " + r.reasons[0].message;
        note("the gate did not accept the search's best (" + why + "); any accepted proposal beats it");
      }
    } catch (const std::exception& e) {
      note(std::string("the gate could not time the search's best: ") + e.what() + "; any accepted proposal beats it");
    }
  }

  // The naive kernel through the gate: the report's speedup then divides two
  // times of one path (the gate's differs from the search's harness).
  void time_naive_by_gate() {
    say("proposer: timing the naive kernel through the gate");
    try {
      gate::GateReport r = gate_run(be_->emit_naive(g_).source);
      if (r.accepted && r.time_ms) res_.naive_gate_ms = *r.time_ms;
      else note("the gate did not time the naive kernel; the speedup keeps the search's naive time");
    } catch (const std::exception& e) {
      note(std::string("the gate could not time the naive kernel: ") + e.what());
    }
  }

  std::string unique_id(const json& p, int round, size_t i) {
    std::string id = p.is_object() && p.contains("id") && p["id"].is_string() ? p["id"].get<std::string>() : "";
    if (id.empty() || id.size() > 200) id = "r" + std::to_string(round) + "." + std::to_string(i + 1);
    std::string base = id;
    for (int k = 2; ids_.count(id); ++k) id = base + "#" + std::to_string(k);
    ids_.insert(id);
    return id;
  }

  void judge(int round, size_t i, const json& p) {
    ProposalRecord rec;
    rec.round = round;
    rec.id = unique_id(p, round, i);
    rec.verdict = "rejected";
    std::string source = judge_shape(p, rec);
    if (!source.empty()) judge_source(source, rec);
    std::string line = "proposer: " + rec.id + " (" + (rec.kind.empty() ? "?" : rec.kind) + "): " + rec.verdict;
    if (rec.time_ms) line += ", " + fmt_ms(*rec.time_ms);
    if (!rec.reasons.empty()) line += ": " + rec.reasons[0].code + ": " + first_chars(rec.reasons[0].message, 160);
    if (rec.winner) line += "  (new best)";
    say(line);
    res_.proposals.push_back(std::move(rec));
  }

  // The kernel source a proposal stands for; empty (and rec rejected) when
  // it is malformed, illegal or cannot be emitted.
  std::string judge_shape(const json& p, ProposalRecord& rec) {
    if (!p.is_object()) {
      rec.reasons.push_back(loop_reason(reason::kMalformedProposal, "a proposal must be a JSON object, got " +
                                                                        first_chars(p.dump(), 60)));
      return "";
    }
    bool has_source = p.contains("source"), has_schedule = p.contains("schedule");
    if (has_source == has_schedule) {
      rec.reasons.push_back(loop_reason(reason::kMalformedProposal,
                                        "a proposal must have exactly one of \"source\" and \"schedule\""));
      return "";
    }
    if (has_source) {
      rec.kind = "source";
      if (!p["source"].is_string() || p["source"].get<std::string>().empty()) {
        rec.reasons.push_back(loop_reason(reason::kMalformedProposal, "\"source\" must be a non-empty string"));
        return "";
      }
      return p["source"].get<std::string>();
    }
    rec.kind = "schedule";
    schedule::Schedule s;
    try {
      s = schedule::schedule_from_json(p["schedule"]);
    } catch (const std::exception& e) {
      rec.reasons.push_back(loop_reason(reason::kMalformedProposal, e.what()));
      return "";
    }
    if (space_.knobs.empty()) {
      rec.reasons.push_back(loop_reason(reason::kIllegalSchedule, "the spec's graph has no schedule space on this target"));
      return "";
    }
    for (const auto& [k, v] : s)
      if (!space_.find(k)) {
        rec.reasons.push_back(loop_reason(reason::kIllegalSchedule, "unknown knob '" + k + "'"));
        return "";
      }
    // Knobs left out keep the best's value (or the default).
    schedule::Schedule full = best_.schedule ? *best_.schedule : schedule::default_schedule(space_);
    for (const auto& [k, v] : s) full[k] = v;
    rec.schedule = full;
    if (std::string why = be_->why_illegal(g_, full); !why.empty()) {
      rec.reasons.push_back(loop_reason(reason::kIllegalSchedule, why));
      return "";
    }
    try {
      return be_->emit(g_, full).source;
    } catch (const std::exception& e) {
      rec.reasons.push_back(loop_reason(reason::kEmitFailed, e.what()));
      return "";
    }
  }

  void judge_source(const std::string& source, ProposalRecord& rec) {
    gate::GateReport r;
    try {
      r = gate_run(source);
    } catch (const std::exception& e) {
      rec.reasons.push_back(loop_reason(reason::kGateError, std::string("the gate could not judge it: ") + e.what()));
      return;
    }
    rec.kernel_sha = r.kernel_sha;
    if (!r.accepted) {
      rec.reasons = r.reasons;
      if (rec.reasons.empty()) rec.reasons.push_back(loop_reason(reason::kGateError, "rejected without a reason"));
      return;
    }
    rec.verdict = "accepted";
    rec.time_ms = r.time_ms;
    if (!r.time_ms) return;  // cannot happen with timing on; never wins untimed
    if (source == best_.kernel.source) return;  // the best itself: nothing to win
    time_best_by_gate();
    if (best_.gate_ms && *r.time_ms >= (1 - o_.min_gain) * *best_.gate_ms) return;
    rec.winner = true;
    best_.id = rec.id;
    best_.kernel.source = source;
    best_.schedule = rec.kind == "schedule" ? rec.schedule : std::nullopt;
    best_.gate_ms = *r.time_ms;
    best_.time_ms = *r.time_ms;
    best_.timed_by = "gate";
    best_.report = redact_report(gate::report_json(r));
    res_.improved = true;
    res_.winner = rec.id;
  }

  const ir::Graph& g_;
  const std::string& spec_text_;
  const target::Target& t_;
  const ProposerOptions& o_;
  std::unique_ptr<backend::Backend> be_;  // before space_, which it builds
  schedule::Space space_;
  Best best_;
  ProposerResult res_;
  std::set<std::string> ids_;
};

}  // namespace

std::string redact_message(const std::string& message) {
  static const std::regex values(R"(\b(reference|references|budget|budgets|bound|bounds|seed|seeds)(\s*[=:]?\s*)([^\s,;()]+))",
                                 std::regex::icase);
  return std::regex_replace(message, values, "$1$2<withheld>");
}

json redact_report(const json& report) { return redact_value(report); }

ProposerResult run_proposer(const ir::Graph& g, const std::string& spec_text, const optimize::OptimizeResult& current,
                            const target::Target& t, const ProposerOptions& opts) {
  Loop loop(g, spec_text, current, t, opts);
  return loop.run();
}

json proposer_json(const ProposerOptions& opts, const ProposerResult& r) {
  json ps = json::array();
  for (const auto& p : r.proposals) {
    json j = {{"id", p.id},           {"round", p.round},
              {"kind", p.kind},       {"verdict", p.verdict},
              {"reasons", reasons_json(p.reasons, false)},
              {"time_ms", p.time_ms ? json(*p.time_ms) : json(nullptr)},
              {"winner", p.winner}};
    if (p.schedule) j["schedule"] = schedule::to_json(*p.schedule);
    if (!p.kernel_sha.empty()) j["kernel_sha"] = p.kernel_sha;
    ps.push_back(j);
  }
  int accepted = 0;
  for (const auto& p : r.proposals) accepted += p.verdict == "accepted" ? 1 : 0;
  json j = {{"command", opts.command},
            {"rounds", opts.rounds},
            {"rounds_run", r.rounds_run},
            {"stop_reason", r.stop_reason},
            {"error", r.error.empty() ? json(nullptr) : json(r.error)},
            {"proposed", r.proposals.size()},
            {"accepted", accepted},
            {"proposals", ps},
            {"winner", r.winner.empty() ? json(nullptr) : json(r.winner)},
            {"improved", r.improved},
            {"baseline_gate_ms", r.baseline_gate_ms ? json(*r.baseline_gate_ms) : json(nullptr)},
            {"best_gate_ms", r.best_gate_ms ? json(*r.best_gate_ms) : json(nullptr)},
            {"naive_gate_ms", r.naive_gate_ms ? json(*r.naive_gate_ms) : json(nullptr)},
            {"min_gain", opts.min_gain},
            {"compared_by", "the gate's median time_ms, the search's best timed through the same gate path"},
            {"notes", r.notes}};
  return j;
}

void apply_to_report(json& report, const ProposerOptions& opts, const ProposerResult& r) {
  report["proposer"] = proposer_json(opts, r);
  if (!r.improved || !r.best_gate_ms) return;
  double ms = *r.best_gate_ms;
  json& t = report["time_ms"];
  t["search"] = t.value("axon", 0.0);
  t["axon"] = ms;
  if (r.naive_gate_ms) {
    t["search_naive"] = t.value("naive", 0.0);
    t["naive"] = *r.naive_gate_ms;
  }
  t["timed_by"] = r.naive_gate_ms ? "gate" : "gate (axon), search (naive)";
  double naive = t.value("naive", 0.0);
  report["speedup_vs_naive"] = ms > 0 ? naive / ms : 0.0;
  if (report.contains("roofline") && report["roofline"].is_object()) {
    double floor = report["roofline"].value("floor_ms", 0.0);
    double fraction = floor > 0 && ms > 0 ? floor / ms : 0.0;
    report["roofline"]["fraction"] = fraction;
    report["roofline"]["fraction_above_one"] = fraction > 1;
  }
  report["variant"] = "proposer";
  report["schedule"] = r.schedule ? schedule::to_json(*r.schedule) : json::object();
}

std::string proposer_markdown(const json& report) {
  if (!report.contains("proposer")) return "";
  const json& p = report["proposer"];
  std::ostringstream o;
  o << "\n## proposer\n\n";
  o << "- command: `" << p.value("command", std::string()) << "`\n";
  o << "- rounds: " << p.value("rounds_run", 0) << " of " << p.value("rounds", 0) << ", stopped: "
    << p.value("stop_reason", std::string("?")) << "\n";
  if (p.contains("error") && p["error"].is_string()) o << "- error: " << p["error"].get<std::string>() << "\n";
  o << "- proposals: " << p.value("proposed", 0) << ", accepted by the gate: " << p.value("accepted", 0) << "\n";
  auto ms = [](const json& v) { return v.is_number() ? fmt_ms(v.get<double>()) : std::string("-"); };
  o << "- best before: " << ms(p["baseline_gate_ms"]) << " (gate), after: " << ms(p["best_gate_ms"]) << "; winner: "
    << (p["winner"].is_string() ? "`" + p["winner"].get<std::string>() + "`" : std::string("none (the search's kernel stays)"))
    << "\n";
  if (!p["proposals"].empty()) {
    o << "\n| id | round | kind | verdict | time | reasons |\n|---|---|---|---|---|---|\n";
    for (const json& x : p["proposals"]) {
      std::string codes;
      std::set<std::string> seen;
      for (const json& r : x["reasons"])
        if (seen.insert(r.value("code", std::string())).second) codes += (codes.empty() ? "" : ", ") + r.value("code", std::string());
      o << "| `" << x.value("id", std::string()) << "` | " << x.value("round", 0) << " | " << x.value("kind", std::string())
        << " | " << x.value("verdict", std::string()) << (x.value("winner", false) ? " (best)" : "") << " | "
        << ms(x["time_ms"]) << " | " << codes << " |\n";
    }
  }
  return o.str();
}

}  // namespace axon::propose
