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

void write_plan(const DriverPlan& plan, const std::string& plan_path, const std::string& blocks_path) {
  std::ofstream blocks(blocks_path, std::ios::binary);
  std::ostringstream p;
  p << "axon-gate-plan 1\n";
  p << "buffers " << plan.input_bytes.size() << " " << plan.output_bytes.size() << "\n";
  size_t b = 0;
  for (int64_t n : plan.input_bytes) p << "size " << b++ << " " << n << "\n";
  for (int64_t n : plan.output_bytes) p << "size " << b++ << " " << n << "\n";
  uint64_t offset = 0;
  for (size_t i = 0; i < plan.blocks.size(); ++i) {
    const std::vector<uint8_t>& data = plan.blocks[i];
    p << "block " << i << " " << offset << " " << data.size() << "\n";
    blocks.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    offset += data.size();
  }
  for (size_t s = 0; s < plan.sets.size(); ++s) {
    p << "set " << s;
    for (int blk : plan.sets[s]) p << " " << blk;
    p << "\n";
  }
  for (size_t c = 0; c < plan.calls.size(); ++c)
    p << "call " << c << " " << plan.calls[c].set << " " << layout_name(plan.calls[c].layout) << " "
      << (plan.calls[c].fresh ? 1 : 0) << "\n";
  if (plan.time_set >= 0)
    p << "time " << plan.time_set << " " << plan.warmup << " " << plan.min_reps << " " << plan.min_ms << " "
      << plan.max_ms << "\n";
  p << "end\n";
  blocks.close();
  std::ofstream out(plan_path);
  out << p.str();
  out.close();
  AXON_CHECK(blocks.good() && out.good()) << "cannot write the gate's plan " << plan_path << " / " << blocks_path;
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
      r.threads = static_cast<int>(int_field(line, "threads", 0));
      r.running = static_cast<int>(int_field(line, "running", 0));
      r.changed_after_return = int_field(line, "changed_after_return", 0) != 0;
      r.input_changed = static_cast<int>(int_field(line, "input_changed", -1));
      bool complete = true;
      for (int64_t n : plan.output_bytes) {
        std::vector<uint8_t> bytes(static_cast<size_t>(n));
        outputs.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(n));
        complete = complete && outputs.gcount() == n;
        r.outputs.push_back(std::move(bytes));
      }
      if (!complete) break;
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
    } else if (kind == "error") {
      log.error = line.substr(6);
    } else if (kind == "done") {
      log.done = true;
    }
  }
  return log;
}

}  // namespace axon::gate
