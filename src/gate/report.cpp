#include "gate/report.h"

#include <cmath>
#include <cstdio>

namespace axon::gate {

using json = nlohmann::json;

const std::vector<std::string>& all_reason_codes() {
  static const std::vector<std::string> codes = {
      reason::kCompileError, reason::kForbiddenSymbol, reason::kCrash,           reason::kTimeout,
      reason::kMemoryLimit,  reason::kOutOfBounds,     reason::kWroteInput,      reason::kUnwrittenOutput,
      reason::kWrongResult,  reason::kNondeterministic, reason::kStaleState,     reason::kIgnoresInput,
      reason::kWorkAfterReturn, reason::kSanitizer,    reason::kFasterThanRoofline, reason::kOutputDependent,
      reason::kCallCountDependent, reason::kNotReentrant, reason::kEnvironmentDependent};
  return codes;
}

bool GateReport::has_reason(const std::string& code) const {
  for (const Reason& r : reasons)
    if (r.code == code) return true;
  return false;
}

namespace {
json finite_or_string(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}
}  // namespace

json report_json(const GateReport& r) {
  json j;
  j["verdict"] = r.accepted ? "accept" : "reject";
  j["reasons"] = json::array();
  for (const Reason& x : r.reasons) j["reasons"].push_back({{"code", x.code}, {"message", x.message}, {"evidence", x.evidence}});
  j["seed"] = r.seed;
  j["distributions"] = r.distributions;
  j["inputs_tried"] = r.inputs.size();
  j["calls"] = r.calls;
  j["inputs"] = json::array();
  for (const InputSet& i : r.inputs)
    j["inputs"].push_back({{"name", i.name}, {"distribution", i.distribution}, {"seed", i.seed}, {"hashes", i.hashes}});
  j["kernel_sha"] = r.kernel_sha;
  j["compiler"] = r.compiler;
  j["max_error_over_budget"] = json::object();
  for (const auto& [name, v] : r.max_error_over_budget) j["max_error_over_budget"][name] = finite_or_string(v);
  j["unbounded_fraction"] = json::object();
  for (const auto& [name, v] : r.unbounded_fraction) j["unbounded_fraction"][name] = v;
  if (r.time_ms) {
    j["time_ms"] = *r.time_ms;
    j["timing"] = {{"median_ms", *r.time_ms}, {"min_ms", r.time_min_ms}, {"max_ms", r.time_max_ms}, {"reps", r.time_reps}};
  } else {
    j["time_ms"] = nullptr;
  }
  j["roofline"] = {{"flops", r.roofline.flops}, {"bytes", r.roofline.bytes}, {"floor_ms", r.roofline.floor_ms}};
  j["replay"] = r.replay;
  if (!r.work_dir.empty()) j["work_dir"] = r.work_dir;
  j["notes"] = r.notes;
  j["phases_s"] = json::object();
  for (const auto& [name, secs] : r.phases_s) j["phases_s"][name] = secs;
  return j;
}

std::string report_text(const GateReport& r) {
  std::string s;
  char buf[512];
  if (r.accepted) {
    s += "accept: the kernel passed every check\n";
  } else {
    std::snprintf(buf, sizeof buf, "reject: %zu reason(s)\n", r.reasons.size());
    s += buf;
    for (const Reason& x : r.reasons) {
      s += "  " + x.code + ": " + x.message + "\n";
      if (x.evidence.contains("log")) {
        std::string log = x.evidence["log"].get<std::string>();
        for (size_t a = 0, n = 0; a < log.size() && n < 12; ++n) {
          size_t b = log.find('\n', a);
          s += "      " + log.substr(a, b == std::string::npos ? std::string::npos : b - a) + "\n";
          a = b == std::string::npos ? log.size() : b + 1;
        }
      }
      if (x.evidence.contains("report")) {
        std::string rep = x.evidence["report"].get<std::string>();
        for (size_t a = 0, n = 0; a < rep.size() && n < 8; ++n) {
          size_t b = rep.find('\n', a);
          s += "      " + rep.substr(a, b == std::string::npos ? std::string::npos : b - a) + "\n";
          a = b == std::string::npos ? rep.size() : b + 1;
        }
      }
    }
  }
  if (!r.max_error_over_budget.empty()) {
    s += "largest error, as a fraction of its budget:";
    for (const auto& [name, v] : r.max_error_over_budget) {
      std::snprintf(buf, sizeof buf, " %s %.3g,", name.c_str(), v);
      s += buf;
    }
    s.back() = '\n';
  }
  if (!r.unbounded_fraction.empty()) {
    s += "not checked (infinite budget: the first-order error bound promises nothing there), largest share of an "
         "output:";
    for (const auto& [name, v] : r.unbounded_fraction) {
      std::snprintf(buf, sizeof buf, " %s %.3g%%,", name.c_str(), 100 * v);
      s += buf;
    }
    s.back() = '\n';
  }
  if (r.time_ms) {
    std::snprintf(buf, sizeof buf, "time: %.4g ms median (min %.4g, max %.4g, %d runs); roofline floor %.3g ms\n",
                  *r.time_ms, r.time_min_ms, r.time_max_ms, r.time_reps, r.roofline.floor_ms);
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "calls: %lld on %zu input sets; seed %llu; kernel sha256 %.16s...\n",
                static_cast<long long>(r.calls), r.inputs.size(), static_cast<unsigned long long>(r.seed),
                r.kernel_sha.c_str());
  s += buf;
  for (const std::string& n : r.notes) s += "note: " + n + "\n";
  if (!r.phases_s.empty()) {
    s += "seconds:";
    for (const auto& [name, secs] : r.phases_s) {
      std::snprintf(buf, sizeof buf, " %s %.2f,", name.c_str(), secs);
      s += buf;
    }
    s.back() = '\n';
  }
  if (!r.work_dir.empty()) s += "work folder: " + r.work_dir + "\n";
  if (!r.replay.empty()) s += "replay: " + r.replay + "\n";
  return s;
}

}  // namespace axon::gate
