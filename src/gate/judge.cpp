#include "gate/judge.h"

#include <signal.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

#include "support/diagnostic.h"
#include "verify/error_budget.h"
#include "verify/kernel_io.h"

namespace axon::gate {

using json = nlohmann::json;

bool Verdict::add(const std::string& code, const std::string& key, std::string message, json evidence) {
  if (!keys_.insert(code + "\n" + key).second) return false;
  report_.reasons.push_back({code, std::move(message), std::move(evidence)});
  return true;
}

std::string multi_index(const ir::Shape& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t a = shape.size(); a-- > 0;) {
    int64_t e = std::max<int64_t>(shape[a], 1);
    idx[a] = flat % e;
    flat /= e;
  }
  std::string s = "[";
  for (size_t a = 0; a < idx.size(); ++a) s += (a ? ", " : "") + std::to_string(idx[a]);
  return s + "]";
}

namespace {

// JSON has no NaN or infinity; those go out as strings.
json number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

std::string fmt(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

std::string last_lines(const std::string& text, int n) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::string out;
  for (size_t i = lines.size() > static_cast<size_t>(n) ? lines.size() - n : 0; i < lines.size(); ++i)
    out += lines[i] + "\n";
  return out;
}

// Lines of `text` from the one containing `at`, at most n.
std::string lines_from(const std::string& text, size_t at, int n) {
  size_t start = text.rfind('\n', at);
  start = start == std::string::npos ? 0 : start + 1;
  size_t end = start;
  for (int i = 0; i < n && end != std::string::npos; ++i) end = text.find('\n', end + 1);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start + 1);
}

std::string call_name(const RunOutcome& run, int c) {
  if (c == -4) return "the concurrent rounds (two threads calling at once)";
  if (c == -5) return "the soak (many calls in a row)";
  if (c == -6) return "the first calls on the kept buffers";
  if (c == -7) return "the last call";
  if (c == -3) return "between calls, after call " + (run.log.calls.empty() ? std::string("-") : std::to_string(run.log.calls.back().call));
  if (c < 0) return "start-up, before the first call";
  return "call " + std::to_string(c);
}

std::string fill_name(const RunOutcome& run, int f) {
  if (f >= 0 && f < static_cast<int>(run.plan->fills.size())) return run.plan->fills[static_cast<size_t>(f)].name;
  return "fill " + std::to_string(f);
}

json call_json(const RunOutcome& run, int c) {
  json j = {{"call", c}, {"build", run.sanitized ? "sanitized" : "optimised"}};
  if (const CallRecord* r = run.log.record(c)) {
    j["layout"] = layout_name(r->layout);
    j["input_set"] = r->set;
    j["output_fill"] = fill_name(run, r->fill);
    j["kernel_call"] = r->seq;
    j["phase"] = phase_name(r->phase);
    if (r->slot >= 0) j["slot"] = r->slot;
    if (r->phase == Phase::Concurrent) j["thread"] = r->thread;
  } else if (c >= 0 && c < static_cast<int>(run.plan->calls.size())) {
    j["layout"] = layout_name(run.plan->calls[static_cast<size_t>(c)].layout);
    j["input_set"] = run.plan->calls[static_cast<size_t>(c)].set;
    j["output_fill"] = fill_name(run, run.plan->calls[static_cast<size_t>(c)].fill);
  }
  return j;
}

std::string buffer_name(const RunOutcome& run, int k) {
  if (k >= 0 && k < static_cast<int>(run.buffer_names.size())) return run.buffer_names[static_cast<size_t>(k)];
  return "buffer " + std::to_string(k);
}

// The sanitizers' report, classified. Returns true when it explains the run.
bool judge_sanitizer_report(const RunOutcome& run, Verdict& v) {
  const std::string& text = run.child_output;
  json ev = call_json(run, run.log.last_begun);
  size_t at;
  if ((at = text.find("ERROR: AddressSanitizer: ")) != std::string::npos) {
    std::string kind = text.substr(at + 25, text.find_first_of(" \n", at + 25) - at - 25);
    std::string report = lines_from(text, at, 30);
    ev["report"] = report;
    static const char* deadly[] = {"SEGV", "BUS", "FPE", "ILL", "ABRT", "stack-overflow"};
    for (const char* d : deadly)
      if (kind == d) {
        v.add(reason::kCrash, "sanitized", "the sanitized build died (" + kind + ") in " +
                                                 call_name(run, run.log.last_begun), ev);
        return true;
      }
    if (kind == "out" || kind == "allocation-size-too-big" || kind == "requested" ||
        report.find("rss limit") != std::string::npos || report.find("malloc limit") != std::string::npos ||
        report.find("allocator is out of memory") != std::string::npos) {
      v.add(reason::kMemoryLimit, "sanitized", "the sanitized build ran out of memory in " +
                                                   call_name(run, run.log.last_begun), ev);
      return true;
    }
    v.add(reason::kSanitizer, "asan", "AddressSanitizer: " + kind + " in " + call_name(run, run.log.last_begun), ev);
    return true;
  }
  if ((at = text.find("runtime error:")) != std::string::npos) {
    ev["report"] = lines_from(text, at, 20);
    std::string first = lines_from(text, at, 1);
    if (!first.empty() && first.back() == '\n') first.pop_back();
    v.add(reason::kSanitizer, "ubsan", "UndefinedBehaviorSanitizer: " + first, ev);
    return true;
  }
  if ((at = text.find("ERROR: LeakSanitizer: detected memory leaks")) != std::string::npos) {
    ev["report"] = lines_from(text, at, 20);
    v.add(reason::kSanitizer, "lsan", "LeakSanitizer: the kernel leaks memory", ev);
    return true;
  }
  return false;
}

}  // namespace

void judge_process(const RunOutcome& run, Verdict& v) {
  const DriverLog& log = run.log;
  const SandboxResult& p = run.process;
  AXON_CHECK(p.started) << "cannot start the gate's driver: " << p.start_error;
  const std::string build = run.sanitized ? "the sanitized build" : "the kernel";
  const std::string tail = last_lines(run.child_output, 20);
  const std::string key = run.sanitized ? "sanitized" : "optimised";
  // The call in progress when the run ended (-3: between calls).
  int current = log.last_begun;
  if (!log.calls.empty() && log.calls.back().call == current) current = -3;

  if (run.sanitized && judge_sanitizer_report(run, v)) return;

  if (p.killed_idle || p.killed_wall || (!p.exited && p.signal == SIGXCPU)) {
    json ev = call_json(run, current);
    ev["seconds"] = p.wall_s;
    ev["limit_s"] = run.idle_timeout_s;
    std::string what = p.killed_idle ? "made no progress for " + fmt(run.idle_timeout_s) + " s"
                                     : p.killed_wall ? "ran past the gate's total time limit"
                                                     : "used up its CPU time limit";
    v.add(reason::kTimeout, key, build + " " + what + " in " + call_name(run, current), ev);
    return;
  }
  if (log.oom_call) {
    v.add(reason::kMemoryLimit, key,
          build + " could not allocate memory within the limit in " + call_name(run, *log.oom_call),
          call_json(run, *log.oom_call));
    return;
  }
  if (log.fault) {
    const Fault& f = *log.fault;
    json ev = call_json(run, f.call);
    char addr[32];
    std::snprintf(addr, sizeof addr, "0x%llx", static_cast<unsigned long long>(f.addr));
    ev["signal"] = signal_name(f.signal);
    ev["address"] = addr;
    if (f.region == "input" && f.side == "inside") {
      ev["buffer"] = buffer_name(run, f.buffer);
      ev["offset"] = f.offset;
      v.add(reason::kWroteInput, "fault", "the kernel wrote into input " + buffer_name(run, f.buffer) + " (byte " +
                                              std::to_string(f.offset) + ") in " + call_name(run, f.call),
            ev);
      return;
    }
    if (f.region != "none" && f.side != "inside") {
      ev["buffer"] = buffer_name(run, f.buffer);
      ev["offset"] = f.offset;
      ev["side"] = f.side;
      ev["buffer_bytes"] = f.buffer >= 0 && f.buffer < static_cast<int>(run.buffer_bytes.size())
                               ? run.buffer_bytes[static_cast<size_t>(f.buffer)]
                               : 0;
      std::string where = f.side == "after" ? "past the end of" : "before the start of";
      v.add(reason::kOutOfBounds, "fault",
            "the kernel touched byte " + std::to_string(f.offset) + " of " + buffer_name(run, f.buffer) + ", " +
                where + " it, in " + call_name(run, f.call),
            ev);
      return;
    }
    ev["output"] = tail;
    v.add(reason::kCrash, key, build + " died of " + signal_name(f.signal) + " at address " + addr + " in " +
                                   call_name(run, f.call),
          ev);
    return;
  }
  if (!p.exited) {
    json ev = call_json(run, current);
    ev["signal"] = signal_name(p.signal);
    ev["output"] = tail;
    if (p.signal == SIGKILL) {
      v.add(reason::kMemoryLimit, key, build + " was killed by SIGKILL (the system's out-of-memory killer) in " +
                                           call_name(run, current),
            ev);
    } else {
      v.add(reason::kCrash, key, build + " died of " + signal_name(p.signal) + " in " + call_name(run, current), ev);
    }
    return;
  }
  if (!log.error.empty()) {
    // The driver could not allocate or write after the kernel had run:
    // the kernel holds the memory (or the disk) the limits allow.
    AXON_CHECK(log.last_begun >= 0 || !log.calls.empty())
        << "the gate's driver failed before the first call: " << log.error << "\n" << tail;
    json ev = call_json(run, log.last_begun);
    ev["driver"] = log.error;
    v.add(reason::kMemoryLimit, key, build + " left too little memory for the next call: " + log.error, ev);
    return;
  }
  if (p.exit_code != 0 || !log.done) {
    json ev = call_json(run, current);
    ev["exit_code"] = p.exit_code;
    ev["output"] = tail;
    AXON_CHECK(log.ready || p.exit_code != 0 || current >= 0)
        << "the gate's driver ended before it was ready (" << p.describe() << ")\n" << tail;
    v.add(reason::kCrash, key, build + " ended the process (exit status " + std::to_string(p.exit_code) + ") in " +
                                   call_name(run, current),
          ev);
  }
}

namespace {

class CallJudge {
 public:
  CallJudge(const ir::Graph& g, const Battery& b, Comparisons& cmp, const RunOutcome& run, Verdict& v)
      : g_(g), b_(b), cmp_(cmp), run_(run), v_(v) {
    for (size_t r = 0; r < run.log.calls.size(); ++r) by_call_[run.log.calls[r].call] = r;
  }

  void judge() {
    compare_all();
    for (const CallRecord& rec : run_.log.calls) judge_hygiene(rec);
    for (const CallRecord& rec : run_.log.calls)
      for (size_t o = 0; o < g_.outputs.size(); ++o)
        if (set_of(rec).compared) judge_values(rec, o);
    if (run_.sanitized) return;
    judge_repeats();
    judge_replays();
    judge_dependence();
  }

 private:
  const BatterySet& set_of(const CallRecord& rec) const { return b_.sets.at(static_cast<size_t>(rec.set)); }
  const CallRecord* record(int call) const {
    auto it = by_call_.find(call);
    return it == by_call_.end() ? nullptr : &run_.log.calls[it->second];
  }
  json where(const CallRecord& rec, size_t o) const {
    json ev = call_json(run_, rec.call);
    ev["input_set"] = set_of(rec).name;
    ev["distribution"] = set_of(rec).distribution;
    ev["output"] = o;
    return ev;
  }
  std::string label(const CallRecord& rec) const {
    std::string l = "call " + std::to_string(rec.call) + " (" + set_of(rec).name;
    if (run_.sanitized) return l + ", sanitized build)";
    l += ", output filled with " + fill_name(run_, rec.fill);
    if (rec.phase != Phase::Battery) l += std::string(", ") + phase_name(rec.phase);
    if (rec.phase == Phase::Concurrent) l += " thread " + std::to_string(rec.thread);
    return l + ", kernel call #" + std::to_string(rec.seq) + ")";
  }

  void judge_hygiene(const CallRecord& rec) {
    if (rec.changed_after_return) {
      v_.add(reason::kWorkAfterReturn, "changed",
             "outputs changed after " + label(rec) + " had returned (checked 50 ms later)", where(rec, 0));
    }
    if (rec.running > 0) {
      json ev = where(rec, 0);
      ev["running_threads"] = rec.running;
      ev["threads"] = rec.threads;
      ev["threads_before_first_call"] = run_.log.baseline_threads;
      v_.add(reason::kWorkAfterReturn, "running",
             std::to_string(rec.running) + " thread(s) kept running 20-50 and 70-100 ms after " + label(rec) + " returned", ev);
    }
    if (rec.input_changed >= 0) {
      json ev = where(rec, 0);
      ev["buffer"] = buffer_name(run_, rec.input_changed);
      v_.add(reason::kWroteInput, "changed",
             "input " + buffer_name(run_, rec.input_changed) + " differs from what was passed after " + label(rec), ev);
    }
  }

  Comparisons::Item item(const CallRecord& rec, size_t o) const {
    return {rec.set, o, run_.plan->fills.at(static_cast<size_t>(rec.fill)).kind == FillKind::Poison, &rec.outputs[o]};
  }

  const OutputCheck& check(const CallRecord& rec, size_t o) {
    const OutputCheck*& c = checks_[{rec.call, o}];
    if (!c) c = cmp_.check({item(rec, o)})[0];
    return *c;
  }

  // The comparisons with the reference that judge() reads, made first, the
  // distinct ones once and on every core (comparisons.h): calls that
  // returned the same bytes (every call on one set, for a deterministic
  // kernel) share one, with the other runs of the verdict too.
  void compare_all() {
    std::vector<Comparisons::Item> items;
    std::vector<std::pair<int, size_t>> keys;
    for (const CallRecord& rec : run_.log.calls)
      if (set_of(rec).compared)
        for (size_t o = 0; o < g_.outputs.size(); ++o) {
          items.push_back(item(rec, o));
          keys.emplace_back(rec.call, o);
        }
    std::vector<const OutputCheck*> done = cmp_.check(items);
    for (size_t i = 0; i < items.size(); ++i) checks_[keys[i]] = done[i];
  }

  void judge_values(const CallRecord& rec, size_t o) {
    const OutputCheck& c = check(rec, o);
    const ir::Shape& shape = g_[g_.outputs[o]].type.shape;
    std::string set = set_of(rec).name;
    if (!run_.sanitized) {
      double& m = v_.report().max_error_over_budget[set];
      m = std::max(m, c.cmp.max_error_over_budget);
      if (c.cmp.unbounded > 0) {
        double& f = v_.report().unbounded_fraction[set];
        f = std::max(f, static_cast<double>(c.cmp.unbounded) / static_cast<double>(g_[g_.outputs[o]].type.numel()));
      }
    }
    if (c.unwritten > 0) {
      json ev = where(rec, o);
      ev["unwritten_elements"] = c.unwritten;
      ev["elements"] = g_[g_.outputs[o]].type.numel();
      ev["first_index"] = c.first_unwritten;
      ev["first_element"] = multi_index(shape, c.first_unwritten);
      v_.add(reason::kUnwrittenOutput, std::to_string(o),
             std::to_string(c.unwritten) + " element(s) of output " + std::to_string(o) + " still hold the poison after " +
                 label(rec) + ", first " + multi_index(shape, c.first_unwritten),
             ev);
    }
    if (!c.cmp.ok()) {
      json ev = where(rec, o);
      ev["index"] = c.cmp.worst_index;
      ev["element"] = multi_index(shape, c.cmp.worst_index);
      ev["got"] = number(c.cmp.worst_got);
      ev["reference"] = number(c.cmp.worst_ref);
      ev["budget"] = number(c.cmp.worst_budget);
      ev["error_over_budget"] = number(c.cmp.max_error_over_budget);
      ev["elements_over_budget"] = c.cmp.mismatches;
      v_.add(reason::kWrongResult, set + (run_.sanitized ? " sanitized " : " ") + std::to_string(o),
             "output " + std::to_string(o) + " is wrong on " + set + " inputs in " + label(rec) + ": element " +
                 multi_index(shape, c.cmp.worst_index) + " is " + fmt(c.cmp.worst_got) + ", reference " +
                 fmt(c.cmp.worst_ref) + ", budget " + fmt(c.cmp.worst_budget) + " (" +
                 std::to_string(c.cmp.mismatches) + " element(s) over budget)",
             ev);
    }
  }

  static int64_t first_difference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int width,
                                  int64_t* count) {
    int64_t first = -1;
    *count = 0;
    for (size_t i = 0; i + static_cast<size_t>(width) <= a.size(); i += static_cast<size_t>(width))
      if (std::memcmp(a.data() + i, b.data() + i, static_cast<size_t>(width)) != 0) {
        if (first < 0) first = static_cast<int64_t>(i) / width;
        ++*count;
      }
    return first;
  }

  json difference(const CallRecord& x, const CallRecord& y, size_t o, int64_t* count) const {
    const ir::Type& t = g_[g_.outputs[o]].type;
    int width = ir::dtype_bytes(t.dtype);
    int64_t first = first_difference(x.outputs[o], y.outputs[o], width, count);
    std::vector<double> a = verify::from_buffer(x.outputs[o].data() + first * width, 1, t.dtype);
    std::vector<double> b = verify::from_buffer(y.outputs[o].data() + first * width, 1, t.dtype);
    json ev = where(y, o);
    ev["compared_with_call"] = x.call;
    ev["first_index"] = first;
    ev["first_element"] = multi_index(t.shape, first);
    ev["values"] = {number(a[0]), number(b[0])};
    ev["elements_differing"] = *count;
    return ev;
  }

  // Same inputs, same addresses, consecutive calls: a deterministic kernel
  // returns the same bits. Same inputs at fresh addresses of the same
  // alignment after a call with other inputs: it returns them again unless
  // that call left state behind.
  void judge_repeats() {
    const CallRecord* first = record(call::kFirst);
    const CallRecord* after = record(call::kAfterOther);
    const CallRecord* repeat = record(call::kRepeat);
    if (!after || !repeat) return;
    for (size_t o = 0; o < g_.outputs.size(); ++o) {
      int64_t n = 0;
      if (after->outputs[o] != repeat->outputs[o]) {
        json ev = difference(*after, *repeat, o, &n);
        v_.add(reason::kNondeterministic, std::to_string(o),
               "two identical calls (" + std::to_string(after->call) + " and " + std::to_string(repeat->call) +
                   ", same inputs, same buffers) disagree in " + std::to_string(n) + " element(s) of output " +
                   std::to_string(o),
               ev);
      } else if (first && first->outputs[o] != after->outputs[o]) {
        json ev = difference(*first, *after, o, &n);
        v_.add(reason::kStaleState, "again " + std::to_string(o),
               "the same inputs gave different bits in calls " + std::to_string(first->call) + " and " +
                   std::to_string(after->call) + " (a call with other inputs came between): " + std::to_string(n) +
                   " element(s) of output " + std::to_string(o) + " differ",
               ev);
      }
    }
  }

  // A call whose output is bit for bit an earlier call's output for other
  // inputs, and wrong for its own: if that earlier output was right for the
  // earlier inputs, the kernel replayed it (stale_state); if it was wrong
  // there too, the output never depended on the inputs that differ
  // (ignores_input). A correct kernel never gets here: its output is within
  // budget for its own inputs.
  void judge_replays() {
    const auto& calls = run_.log.calls;
    for (size_t o = 0; o < g_.outputs.size(); ++o) {
      // The outputs' fingerprints, each recorded buffer hashed once in the
      // verdict (compare_all hashed those of the compared sets).
      std::vector<uint64_t> hash(calls.size());
      for (size_t i = 0; i < calls.size(); ++i) hash[i] = cmp_.fingerprint(&calls[i].outputs[o]);
      for (size_t k = 1; k < calls.size(); ++k) {
        if (calls[k].phase == Phase::Concurrent) continue;  // judged as not_reentrant
        for (size_t j = 0; j < k; ++j) {
          if (calls[j].phase == Phase::Concurrent) continue;
          // The inputs first: calls on the same inputs (most pairs) need
          // not have their outputs compared byte by byte.
          if (hash[j] != hash[k]) continue;
          const BatterySet& sj = set_of(calls[j]);
          const BatterySet& sk = set_of(calls[k]);
          if (sj.blocks == sk.blocks) continue;
          if (!calls[j].outputs.shares(calls[k].outputs) && calls[j].outputs[o] != calls[k].outputs[o]) continue;
          if (check(calls[k], o).cmp.ok()) break;  // right for its own inputs: no harm
          std::vector<std::string> differing;
          for (size_t p = 0; p < sj.blocks.size(); ++p)
            if (sj.blocks[p] != sk.blocks[p]) differing.push_back(g_.params[p].name);
          json ev = where(calls[k], o);
          ev["same_as_call"] = calls[j].call;
          ev["same_as_input_set"] = sj.name;
          ev["differing_inputs"] = differing;
          if (check(calls[j], o).cmp.ok()) {
            v_.add(reason::kStaleState, "replay " + std::to_string(o),
                   label(calls[k]) + " returned, bit for bit, output " + std::to_string(o) + " of " + label(calls[j]) +
                       ", which is wrong for its own inputs",
                   ev);
          } else {
            std::string names;
            for (const std::string& d : differing) names += (names.empty() ? "" : ", ") + d;
            v_.add(reason::kIgnoresInput, std::to_string(o) + " " + names,
                   "output " + std::to_string(o) + " does not change when " + names + " change" +
                       (differing.size() > 1 ? "" : "s") + " (" + label(calls[j]) + " and " + label(calls[k]) +
                       "), though the reference does",
                   ev);
          }
          break;
        }
      }
    }
  }

  // Right: every output within budget and written.
  bool right(const CallRecord& rec) {
    for (size_t o = 0; o < g_.outputs.size(); ++o) {
      const OutputCheck& c = check(rec, o);
      if (!c.cmp.ok() || c.unwritten > 0) return false;
    }
    return true;
  }

  json pair_evidence(const CallRecord& good, const CallRecord& bad) {
    json ev = where(bad, 0);
    ev.erase("output");
    ev["right_call"] = call_json(run_, good.call);
    ev["wrong_call"] = call_json(run_, bad.call);
    return ev;
  }

  // The classes of a kernel that knows it is being watched, from calls on
  // the same input set and the same kind of buffers (so the same
  // alignment), one right and one wrong. A correct kernel is right on every
  // call, so none of them can fire for it.
  //   call_count_dependent  two such calls with the same output fill
  //                         disagree: only the calls before them differ;
  //   output_dependent      otherwise, if each fill is always right or
  //                         always wrong and both happen: the answer
  //                         follows what the output held;
  //   not_reentrant         a call made while another thread called the
  //                         kernel is wrong, and the same call (same
  //                         buffers, same fill) alone afterwards is right.
  void judge_dependence() {
    std::map<std::pair<int, Layout>, std::vector<const CallRecord*>> groups;
    for (const CallRecord& r : run_.log.calls)
      if (set_of(r).compared && r.phase != Phase::Concurrent) groups[{r.set, r.layout}].push_back(&r);
    for (const auto& [key, recs] : groups) {
      std::map<int, std::pair<const CallRecord*, const CallRecord*>> by_fill;  // first right, first wrong
      for (const CallRecord* r : recs) {
        auto& slot = by_fill[r->fill];
        const bool ok = right(*r);
        if (ok && !slot.first) slot.first = r;
        if (!ok && !slot.second) slot.second = r;
      }
      const CallRecord *count_right = nullptr, *count_wrong = nullptr, *fill_right = nullptr, *fill_wrong = nullptr;
      for (const auto& [f, rw] : by_fill) {
        if (rw.first && rw.second && (!count_wrong || rw.second->seq < count_wrong->seq)) {
          count_right = rw.first;
          count_wrong = rw.second;
        }
        if (rw.first && !rw.second && !fill_right) fill_right = rw.first;
        if (rw.second && !rw.first && !fill_wrong) fill_wrong = rw.second;
      }
      if (count_wrong) {
        v_.add(reason::kCallCountDependent, "calls",
               "the result changed with nothing but the calls made before: " + label(*count_right) + " is right, " +
                   label(*count_wrong) + " is wrong, on the same inputs, kind of buffers and output fill",
               pair_evidence(*count_right, *count_wrong));
      } else if (fill_right && fill_wrong) {
        v_.add(reason::kOutputDependent, "fill",
               "the result depends on what the output buffers held before the call: " + label(*fill_right) +
                   " is right and " + label(*fill_wrong) + " is wrong, on the same inputs and kind of buffers",
               pair_evidence(*fill_right, *fill_wrong));
      }
    }
    for (const CallRecord& r : run_.log.calls) {
      if (r.phase != Phase::Concurrent || !set_of(r).compared || right(r)) continue;
      for (const CallRecord& later : run_.log.calls) {
        if (later.phase != Phase::AfterRounds || later.slot != r.slot || later.fill != r.fill || !right(later)) continue;
        json ev = pair_evidence(later, r);
        ev["rounds"] = run_.log.rounds;
        v_.add(reason::kNotReentrant, "rounds",
               "not reentrant: called from two threads at once on distinct buffers, " + label(r) +
                   " is wrong, and the same call alone right after the rounds, " + label(later) + ", is right",
               ev);
        break;
      }
    }
  }

  const ir::Graph& g_;
  const Battery& b_;
  Comparisons& cmp_;
  const RunOutcome& run_;
  Verdict& v_;
  std::map<int, size_t> by_call_;
  std::map<std::pair<int, size_t>, const OutputCheck*> checks_;
};

}  // namespace

void judge_calls(const ir::Graph& g, const Battery& b, Comparisons& cmp, const RunOutcome& run, Verdict& v) {
  CallJudge(g, b, cmp, run, v).judge();
  if (!run.sanitized) {
    int64_t made = 0;
    for (const CallRecord& r : run.log.calls) made = std::max(made, r.seq + 1);
    v.report().calls = made;
  }
}

namespace {

// Outputs of `set` within budget (the plain process has no poison, so an
// unwritten element is simply wrong).
bool outputs_right(const ir::Graph& g, Comparisons& cmp, int set, const std::vector<std::vector<uint8_t>>& outputs,
                   verify::Comparison* worst) {
  std::vector<Comparisons::Item> items;
  for (size_t o = 0; o < g.outputs.size() && o < outputs.size(); ++o) items.push_back({set, o, false, &outputs[o]});
  bool ok = true;
  for (const OutputCheck* c : cmp.check(items))
    if (!c->cmp.ok() && ok) {
      ok = false;
      if (worst) *worst = c->cmp;
    }
  return ok;
}

}  // namespace

void judge_user_run(const ir::Graph& g, const Battery& b, Comparisons& cmp, const UserOutcome& user,
                    const RunOutcome& optimised, Verdict& v) {
  const SandboxResult& p = user.process;
  AXON_CHECK(p.started) << "cannot start the gate's user driver: " << p.start_error;
  const std::string set = b.sets.at(static_cast<size_t>(user.set)).name;
  json ev = {{"build", "plain process"}, {"input_set", set}, {"calls", user.log.calls},
             {"planned_calls", user.planned_calls}};
  // A kernel that crashes or hangs in the driver already has its reason.
  const bool failed_in_driver = v.has(reason::kCrash) || v.has(reason::kTimeout) || v.has(reason::kMemoryLimit);
  if (p.killed_idle || p.killed_wall || (!p.exited && p.signal == SIGXCPU)) {
    ev["limit_s"] = user.idle_timeout_s;
    if (!failed_in_driver)
      v.add(reason::kTimeout, "user", "the kernel made no progress for " + fmt(user.idle_timeout_s) +
                                          " s in a plain process (malloc'd buffers, called in a loop)", ev);
    return;
  }
  if (!p.exited || p.exit_code != 0 || !user.log.done) {
    ev["status"] = p.describe();
    ev["output"] = last_lines(user.child_output, 20);
    if (!failed_in_driver)
      v.add(reason::kCrash, "user", "the kernel ended a plain process (malloc'd buffers, called in a loop): " +
                                        p.describe() + " after " + std::to_string(user.log.calls) + " call(s)", ev);
    return;
  }
  if (user.log.first_outputs.empty() || user.log.last_outputs.empty()) return;
  verify::Comparison first_cmp, last_cmp;
  const bool first_ok = outputs_right(g, cmp, user.set, user.log.first_outputs, &first_cmp);
  const bool last_ok = outputs_right(g, cmp, user.set, user.log.last_outputs, &last_cmp);
  if (first_ok && last_ok) return;
  bool right_in_driver = false;
  for (const CallRecord& r : optimised.log.calls)
    if (r.set == user.set && r.phase != Phase::Concurrent && outputs_right(g, cmp, r.set, r.outputs.all(), nullptr)) {
      right_in_driver = true;
      break;
    }
  // Wrong on inputs the driver's calls got right; when the driver's run
  // already named why (the output's content, the calls before), that
  // explains this too.
  if (!right_in_driver || v.has(reason::kOutputDependent) || v.has(reason::kCallCountDependent)) return;
  const verify::Comparison& c = first_ok ? last_cmp : first_cmp;
  ev["call"] = first_ok ? user.log.calls - 1 : 0;
  ev["got"] = number(c.worst_got);
  ev["reference"] = number(c.worst_ref);
  ev["budget"] = number(c.worst_budget);
  ev["index"] = c.worst_index;
  ev["elements_over_budget"] = c.mismatches;
  v.add(reason::kEnvironmentDependent, "user",
        "the kernel is right in the gate's driver but wrong when a plain process calls it (malloc'd buffers, no "
        "poison or guard pages): on " + set + " inputs its " + (first_ok ? "last call (of " + std::to_string(user.log.calls) + ")" : std::string("first call")) +
            " returns " + fmt(c.worst_got) + " at element " + std::to_string(c.worst_index) + ", reference " +
            fmt(c.worst_ref),
        ev);
}

bool judge_race_run(const RunOutcome& run, const std::vector<StaticData>& statics, Verdict& v, std::string* why) {
  const std::string& text = run.child_output;
  const size_t at = text.find("WARNING: ThreadSanitizer: data race");
  if (at == std::string::npos) {
    if (run.process.exited && run.process.exit_code == 0 && run.log.done) return true;
    *why = "the ThreadSanitizer build's run " +
           run.process.describe() +
           (text.empty() ? std::string() : ": " + lines_from(text, 0, 3));
    return false;
  }
  // A thread the OpenMP runtime started (OMP_THREAD_LIMIT should have
  // prevented it) synchronises through libgomp, which ThreadSanitizer cannot
  // see: such a report proves nothing.
  const size_t report_end = text.find("SUMMARY: ThreadSanitizer", at);
  if (text.substr(at, report_end == std::string::npos ? std::string::npos : report_end - at).find("libgomp") !=
      std::string::npos) {
    *why = "the ThreadSanitizer build's report involves the OpenMP runtime's threads, which it cannot follow";
    return false;
  }
  // "  Location is global 'g_bt' of size 23040 at 0x..." names the memory.
  std::string where;
  const size_t loc = text.find("Location is ", at);
  if (loc != std::string::npos) where = text.substr(loc, text.find('\n', loc) - loc);
  json shared = json::array();
  for (const StaticData& d : statics)
    shared.push_back({{"section", d.section}, {"symbol", d.symbol}, {"bytes", d.bytes}});
  v.add(reason::kNotReentrant, "tsan",
        "not reentrant: two threads calling at once on distinct buffers touch the same static memory without "
        "synchronisation (ThreadSanitizer" + (where.empty() ? std::string() : ": " + where) + ")",
        {{"report", lines_from(text, at, 40)}, {"static_data", shared}, {"rounds", run.log.rounds}});
  return true;
}

}  // namespace axon::gate
