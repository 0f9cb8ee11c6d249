// Knob bookkeeping shared by every space; the spaces themselves come from
// the CPU code generator's lowering (see schedule_space).
#include "schedule/schedule.h"

#include "support/diagnostic.h"

namespace axon::schedule {

const Knob* Space::find(const std::string& name) const {
  for (const Knob& k : knobs)
    if (k.name == name) return &k;
  return nullptr;
}

int64_t Space::size() const {
  int64_t n = 1;
  for (const Knob& k : knobs) {
    int64_t v = static_cast<int64_t>(k.values.size());
    if (v > 0 && n > (int64_t{1} << 62) / v) return int64_t{1} << 62;
    n *= v;
  }
  return n;
}

Schedule default_schedule(const Space& s) {
  Schedule out;
  for (const Knob& k : s.knobs)
    if (!k.values.empty()) out[k.name] = k.values[0];
  return out;
}

nlohmann::json to_json(const Schedule& s) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : s) j[k] = v;
  return j;
}

Schedule schedule_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw Diagnostic(SourceLoc{}, "a schedule must be a JSON object of integers, got " + j.dump());
  Schedule s;
  for (const auto& [k, v] : j.items()) {
    if (!v.is_number_integer())
      throw Diagnostic(SourceLoc{}, "schedule knob '" + k + "' must be an integer, got " + v.dump());
    s[k] = v.get<int64_t>();
  }
  return s;
}

}  // namespace axon::schedule
