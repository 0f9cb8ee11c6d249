#include "gate/protocol.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "support/diagnostic.h"

namespace axon::gate {

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::GuardAfter: return "after";
    case Layout::GuardBefore: return "before";
    case Layout::Heap: return "heap";
  }
  return "?";
}

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::Battery: return "battery";
    case Phase::Baseline: return "baseline";
    case Phase::Concurrent: return "concurrent";
    case Phase::AfterRounds: return "after_rounds";
    case Phase::Soak: return "soak";
    case Phase::Recheck: return "recheck";
    case Phase::Last: return "last";
  }
  return "?";
}

int DriverPlan::max_records() const {
  int soak_records = 0;
  for (const SoakCall& c : soak) soak_records += c.record ? 1 : 0;
  const int nslots = static_cast<int>(slots.size());
  // Battery, baselines, rounds (two records per thread and one call per
  // slot after them), soak, one drift (three records) per slot and phase
  // (the warm-up, the rounds, the soak), the last call.
  return static_cast<int>(calls.size()) + nslots + (concurrent_a >= 0 ? 6 : 0) + soak_records + 9 * nslots + 1;
}

void write_blocks(const DriverPlan& plan, const std::string& blocks_path) {
  std::ofstream blocks(blocks_path, std::ios::binary);
  for (const std::vector<uint8_t>& data : plan.blocks)
    blocks.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  blocks.close();
  AXON_CHECK(blocks.good()) << "cannot write " << blocks_path;
}

void write_plan(const DriverPlan& plan, const std::string& plan_path, const std::string& fills_path) {
  std::ostringstream p;
  p << "axon-gate-plan 5\n";
  p << "buffers " << plan.input_bytes.size() << " " << plan.output_bytes.size() << "\n";
  size_t b = 0;
  for (int64_t n : plan.input_bytes) p << "size " << b++ << " " << n << "\n";
  for (int64_t n : plan.output_bytes) p << "size " << b++ << " " << n << "\n";
  uint64_t offset = 0;
  for (size_t i = 0; i < plan.blocks.size(); ++i) {
    const std::vector<uint8_t>& data = plan.blocks[i];
    p << "block " << i << " " << offset << " " << data.size() << "\n";
    offset += data.size();
  }
  for (size_t s = 0; s < plan.sets.size(); ++s) {
    p << "set " << s;
    for (int blk : plan.sets[s]) p << " " << blk;
    p << "\n";
  }
  bool any_data = false;
  for (const OutputFill& f : plan.fills) any_data |= f.kind == FillKind::Data;
  bool fills_ok = true;
  if (any_data) {
    std::ofstream fills(fills_path, std::ios::binary);
    size_t slash = fills_path.find_last_of('/');
    p << "fillfile " << (slash == std::string::npos ? fills_path : fills_path.substr(slash + 1)) << "\n";
    uint64_t at = 0;
    for (size_t f = 0; f < plan.fills.size(); ++f) {
      const OutputFill& fill = plan.fills[f];
      static const char* kinds[] = {"poison", "zeros", "untouched", "data"};
      p << "fill " << f << " " << kinds[static_cast<int>(fill.kind)];
      if (fill.kind == FillKind::Data) {
        AXON_CHECK(fill.data.size() == plan.output_bytes.size()) << "fill " << fill.name << " needs one block per output";
        for (size_t o = 0; o < fill.data.size(); ++o) {
          AXON_CHECK(static_cast<int64_t>(fill.data[o].size()) == plan.output_bytes[o]) << "fill " << fill.name;
          p << " " << at;
          fills.write(reinterpret_cast<const char*>(fill.data[o].data()), static_cast<std::streamsize>(fill.data[o].size()));
          at += fill.data[o].size();
        }
      }
      p << "\n";
    }
    fills.close();
    fills_ok = fills.good();
  } else {
    for (size_t f = 0; f < plan.fills.size(); ++f) {
      static const char* kinds[] = {"poison", "zeros", "untouched", "data"};
      AXON_CHECK(plan.fills[f].kind != FillKind::Data);
      p << "fill " << f << " " << kinds[static_cast<int>(plan.fills[f].kind)] << "\n";
    }
  }
  for (size_t c = 0; c < plan.calls.size(); ++c)
    p << "call " << c << " " << plan.calls[c].set << " " << layout_name(plan.calls[c].layout) << " "
      << (plan.calls[c].fresh ? 1 : 0) << " " << plan.calls[c].fill << "\n";
  for (size_t k = 0; k < plan.slots.size(); ++k)
    p << "slot " << k << " " << plan.slots[k].first << " " << plan.slots[k].second << "\n";
  if (plan.concurrent_a >= 0)
    p << "concurrent " << plan.concurrent_a << " " << plan.concurrent_b << " " << plan.min_rounds << " "
      << plan.max_rounds << " " << plan.rounds_min_ms << " " << plan.rounds_max_ms << " " << plan.min_overlaps << " "
      << plan.min_overlaps_slow << " " << plan.min_overlap_ms << "\n";
  if (!plan.soak.empty()) {
    p << "soak " << plan.soak.size() << " " << plan.soak_max_ms << "\n";
    for (const SoakCall& c : plan.soak) p << "s " << c.slot << " " << c.fill << " " << (c.record ? 1 : 0) << " " << (c.compare || c.record ? 1 : 0) << "\n";
  }
  if (plan.timed && !plan.soak.empty()) p << "time\n";
  if (!plan.hold_path.empty()) {
    AXON_CHECK(plan.hold_path.find_first_of(" \t\n") == std::string::npos && plan.hold_path.size() < 4096)
        << "the hold file's path must be one word: " << plan.hold_path;
    p << "hold " << plan.hold_path << "\n";
  }
  if (plan.last_slot >= 0) p << "last " << plan.last_slot << " " << plan.last_fill << "\n";
  p << "key " << plan.key << "\n";
  p << "end\n";
  std::ofstream out(plan_path);
  out << p.str();
  out.close();
  AXON_CHECK(out.good() && fills_ok)
      << "cannot write the gate's plan " << plan_path << " / " << fills_path;
}

namespace {

// key=value fields of one event line.
std::string field(const std::string& line, const std::string& key) {
  std::string pat = " " + key + "=";
  size_t at = line.find(pat);
  if (at == std::string::npos) return "";
  at += pat.size();
  size_t end = line.find(' ', at);
  return line.substr(at, end == std::string::npos ? std::string::npos : end - at);
}
long long int_field(const std::string& line, const std::string& key, long long fallback = -1) {
  std::string v = field(line, key);
  if (v.empty()) return fallback;
  return std::strtoll(v.c_str(), nullptr, 0);
}
double real_field(const std::string& line, const std::string& key) {
  std::string v = field(line, key);
  return v.empty() ? 0 : std::strtod(v.c_str(), nullptr);
}

}  // namespace

DriverLog read_driver_log(const DriverPlan& plan, const std::string& events_path, const std::string& outputs_path) {
  DriverLog log;
  std::ifstream events(events_path);
  std::ifstream outputs(outputs_path, std::ios::binary);
  std::string line;
  while (std::getline(events, line)) {
    if (events.eof()) break;  // a line without its newline was cut short
    std::string kind = line.substr(0, line.find(' '));
    if (kind == "ready") {
      log.ready = true;
      log.baseline_threads = static_cast<int>(int_field(line, "threads", 0));
    } else if (kind == "begin") {
      log.last_begun = static_cast<int>(int_field(line, "call"));
    } else if (kind == "end") {
      CallRecord r;
      r.call = static_cast<int>(int_field(line, "call"));
      r.seq = int_field(line, "seq", -1);
      r.set = static_cast<int>(int_field(line, "set", -1));
      r.fill = static_cast<int>(int_field(line, "fill", 0));
      r.slot = static_cast<int>(int_field(line, "slot", -1));
      r.thread = static_cast<int>(int_field(line, "thread", 0));
      std::string layout = field(line, "layout");
      r.layout = layout == "before" ? Layout::GuardBefore : layout == "heap" ? Layout::Heap : Layout::GuardAfter;
      std::string phase = field(line, "phase");
      for (Phase ph : {Phase::Battery, Phase::Baseline, Phase::Concurrent, Phase::AfterRounds, Phase::Soak,
                       Phase::Recheck, Phase::Last})
        if (phase == phase_name(ph)) r.phase = ph;
      r.threads = static_cast<int>(int_field(line, "threads", 0));
      r.running = static_cast<int>(int_field(line, "running", 0));
      r.changed_after_return = int_field(line, "changed_after_return", 0) != 0;
      r.input_changed = static_cast<int>(int_field(line, "input_changed", -1));
      const long long same = int_field(line, "same", -1);
      if (same >= 0) {  // an earlier record's outputs, bit for bit, not written again
        const CallRecord* earlier = log.record(static_cast<int>(same));
        if (!earlier) break;
        r.outputs = earlier->outputs;  // shared, not copied
        log.calls.push_back(std::move(r));
        continue;
      }
      bool complete = true;
      std::vector<std::vector<uint8_t>> all;
      for (int64_t n : plan.output_bytes) {
        std::vector<uint8_t> bytes(static_cast<size_t>(n));
        outputs.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(n));
        complete = complete && outputs.gcount() == n;
        all.push_back(std::move(bytes));
      }
      if (!complete) break;
      r.outputs = RecordedOutputs(std::move(all));
      log.calls.push_back(std::move(r));
    } else if (kind == "fault") {
      Fault f;
      f.signal = static_cast<int>(int_field(line, "signal", 0));
      f.code = static_cast<int>(int_field(line, "code", 0));
      f.addr = std::strtoull(field(line, "addr").c_str(), nullptr, 16);
      f.region = field(line, "region");
      f.side = field(line, "side");
      f.buffer = static_cast<int>(int_field(line, "buffer"));
      f.offset = int_field(line, "offset", 0);
      f.call = static_cast<int>(int_field(line, "call"));
      log.fault = f;
    } else if (kind == "oom") {
      log.oom_call = static_cast<int>(int_field(line, "call"));
    } else if (kind == "time") {
      log.timed = true;
      log.median_ms = real_field(line, "median_ms");
      log.min_ms = real_field(line, "min_ms");
      log.max_ms = real_field(line, "max_ms");
      log.reps = static_cast<int>(int_field(line, "reps", 0));
    } else if (kind == "held") {
      log.held_ms = real_field(line, "ms");
    } else if (kind == "soaked") {
      log.soaked = int_field(line, "calls", -1);
      log.soak_planned = int_field(line, "planned", -1);
    } else if (kind == "rounds") {
      log.rounds = static_cast<int>(int_field(line, "n", -1));
      log.overlaps = int_field(line, "overlaps", -1);
      log.overlap_ms = static_cast<double>(int_field(line, "overlap_ms", -1));
    } else if (kind == "error") {
      log.error = line.substr(6);
    } else if (kind == "done") {
      log.done = true;
    }
  }
  return log;
}

const CallRecord* DriverLog::record(int call) const {
  for (const CallRecord& r : calls)
    if (r.call == call) return &r;
  return nullptr;
}

}  // namespace axon::gate
